package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relay.codes.CodeGrant;
import io.relay.codes.CodeStore;
import io.relay.testing.TestClusterConfig;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The rolling upgrade from a build that replicated codes as Jackson CBOR (docs/cluster.md), with
 * the node's own configuration (its application.conf over every reference.conf): a node reads the
 * codes such a build wrote, and a node of the upgrade's first round
 * ({@code RELAY_CODE_ENTRY_SERIALIZER=jackson-cbor}) writes Jackson CBOR and reads the compact form.
 */
class CodeEntryUpgradeTest {
  private static final Map<String, Object> NO_EXIT = Map.of("pekko.coordinated-shutdown.exit-jvm", "off");

  private final ActorTestKit node = ActorTestKit.create("relay", TestClusterConfig.with(NO_EXIT));
  private final ActorTestKit firstRound =
      ActorTestKit.create(
          "relay",
          TestClusterConfig.with(
              Map.of("pekko.coordinated-shutdown.exit-jvm", "off", "pekko.actor.serialization-bindings.\"io.relay.codes.CodeStore$Entry\"", "jackson-cbor")));
  private final ActorRef<CodeStore.Command> issuer = node.createTestProbe(CodeStore.Command.class).getRef();
  private final CodeGrant grant = new CodeGrant("lab/a", List.of("read", "write"), "b-1", 1_900_000_000L, 1_800_000_000_000L);

  @AfterEach
  void stop() {
    firstRound.shutdownTestKit();
    node.shutdownTestKit();
  }

  @Test
  void aNodeReadsTheCodesAnOlderBuildWroteAsJacksonCbor() {
    Serialization writer = serialization(firstRound);
    CodeStore.Entry written = new CodeStore.Entry(grant, asSeenBy(firstRound, issuer));
    Serializer jackson = writer.findSerializerFor(written);
    assertEquals(node.system().settings().config().getInt("pekko.actor.serialization-identifiers.jackson-cbor"), jackson.identifier(),
        "the first round writes codes as Jackson CBOR, as the older build did");
    byte[] bytes = writer.serialize(written).get();

    Object read = serialization(node).deserialize(bytes, jackson.identifier(), Serializers.manifestFor(jackson, written)).get();

    assertEquals(new CodeStore.Entry(grant, issuer), read);
  }

  @Test
  void aNodeOfTheFirstRoundReadsTheCompactForm() {
    CodeStore.Entry written = new CodeStore.Entry(grant, issuer);
    Serializer compact = serialization(node).findSerializerFor(written);
    byte[] bytes = serialization(node).serialize(written).get();

    Object read = serialization(firstRound).deserialize(bytes, compact.identifier(), Serializers.manifestFor(compact, written)).get();

    assertEquals(new CodeStore.Entry(grant, asSeenBy(firstRound, issuer)), read);
  }

  private static Serialization serialization(ActorTestKit kit) {
    return SerializationExtension.get(Adapter.toClassic(kit.system()));
  }

  /** {@code ref} as another node knows it: by its path. */
  private <T> ActorRef<T> asSeenBy(ActorTestKit other, ActorRef<T> ref) {
    return ActorRefResolver.get(other.system()).resolveActorRef(ActorRefResolver.get(node.system()).toSerializationFormat(ref));
  }
}
