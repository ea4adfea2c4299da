package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.TestClusterConfig;
import java.io.NotSerializableException;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * Codes are replicated in the compact form, smaller than Jackson CBOR's, and read back whole (the
 * issuer's reference included); an unknown layout is refused by name. Reading codes an older
 * build wrote as Jackson CBOR is the node's configuration's part: {@code CodeEntryUpgradeTest}.
 */
class CodeEntrySerializerTest {
  private static final ActorTestKit KIT = ActorTestKit.create("relay", TestClusterConfig.get());
  private static final Serialization SERIALIZATION = SerializationExtension.get(Adapter.toClassic(KIT.system()));
  /** Pekko's Jackson CBOR serializer's id (pekko-serialization-jackson's reference.conf). */
  private static final int JACKSON_CBOR = KIT.system().settings().config().getInt("pekko.actor.serialization-identifiers.jackson-cbor");

  private final ActorRef<CodeStore.Command> issuer = KIT.createTestProbe(CodeStore.Command.class).getRef();
  private final CodeStore.Entry entry =
      new CodeStore.Entry(
          new CodeGrant("lab/é-" + "t".repeat(250), List.of("read", "write", "relay:admin", "relay:stats"), "b".repeat(128), 1_900_000_000L, 1_800_000_000_123L),
          issuer);

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aCodeIsWrittenCompactlyAndReadBackWhole() throws Exception {
    Serializer serializer = SERIALIZATION.findSerializerFor(entry);
    assertInstanceOf(CodeEntrySerializer.class, serializer, "codes are bound to the compact serializer");
    byte[] bytes = SERIALIZATION.serialize(entry).get();
    Object back = SERIALIZATION.deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, entry)).get();
    assertEquals(entry, back);
    assertEquals(entry.issuer(), ((CodeStore.Entry) back).issuer(), "the issuer's reference resolves to the same actor");

    byte[] asJackson = asJackson();
    assertTrue(bytes.length < asJackson.length,
        "the compact form (" + bytes.length + " bytes) is smaller than Jackson CBOR's (" + asJackson.length + ")");
  }

  @Test
  void anUnknownLayoutIsRefusedWithAClearError() {
    CodeEntrySerializer serializer = (CodeEntrySerializer) SERIALIZATION.findSerializerFor(entry);
    NotSerializableException e = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {1}, "E9"));
    assertTrue(e.getMessage().contains("E9"), e.getMessage());
  }

  /**
   * The entry as a build that bound codes to Jackson CBOR wrote it: a node configured as the first
   * round of a rolling upgrade has it ({@code RELAY_CODE_ENTRY_SERIALIZER=jackson-cbor}).
   */
  private byte[] asJackson() {
    ActorTestKit old =
        ActorTestKit.create(
            "relay", TestClusterConfig.with(Map.of("pekko.actor.serialization-bindings.\"io.relay.codes.CodeStore$Entry\"", "jackson-cbor")));
    try {
      Serialization serialization = SerializationExtension.get(Adapter.toClassic(old.system()));
      assertEquals(JACKSON_CBOR, serialization.findSerializerFor(entry).identifier(), "the override binds codes to Jackson CBOR");
      // the issuer as the old node knows it: an actor of another node
      ActorRef<CodeStore.Command> remoteIssuer =
          ActorRefResolver.get(old.system()).resolveActorRef(ActorRefResolver.get(KIT.system()).toSerializationFormat(issuer));
      return serialization.serialize(new CodeStore.Entry(entry.grant(), remoteIssuer)).get();
    } finally {
      old.shutdownTestKit();
    }
  }
}
