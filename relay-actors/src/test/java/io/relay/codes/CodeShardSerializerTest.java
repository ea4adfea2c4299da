package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.TestClusterConfig;
import java.io.NotSerializableException;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A code shard goes over the wire in its compact form and comes back whole: every code, its grant,
 * its issuer's reference and the horizon; an unknown layout is refused by name.
 */
class CodeShardSerializerTest {
  private static final ActorTestKit KIT = ActorTestKit.create("relay", TestClusterConfig.get());
  private static final Serialization SERIALIZATION = SerializationExtension.get(Adapter.toClassic(KIT.system()));

  private final ActorRef<CodeStore.Command> issuer = KIT.createTestProbe(CodeStore.Command.class).getRef();
  private final ActorRef<CodeStore.Command> otherIssuer = KIT.createTestProbe(CodeStore.Command.class).getRef();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aShardIsWrittenCompactlyAndReadBackWhole() {
    CodeShard shard =
        CodeShard.EMPTY
            .put("code-1", new CodeEntry(
                new CodeGrant("lab/é-" + "t".repeat(250), List.of("read", "write", "relay:admin", "relay:stats"), "b".repeat(128), 1_900_000_000L, 1_800_000_000_123L),
                issuer))
            .put("code-2", new CodeEntry(new CodeGrant("demo", List.of("read"), "", 1_900_000_000L, 1_800_000_000_456L), otherIssuer))
            .put("code-3", new CodeEntry(new CodeGrant("demo", List.of(), "b2", 1_900_000_000L, 1_800_000_000_789L), issuer))
            .prunedTo(1_700_000_000_000L)
            .resetDelta();
    Serializer serializer = SERIALIZATION.findSerializerFor(shard);
    assertInstanceOf(CodeShardSerializer.class, serializer, "code shards are bound to the compact serializer");
    byte[] bytes = SERIALIZATION.serialize(shard).get();
    CodeShard back = (CodeShard) SERIALIZATION.deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, shard)).get();

    assertEquals(shard, back);
    assertEquals(1_700_000_000_000L, back.horizon());
    assertEquals(otherIssuer, back.get("code-2").issuer(), "the issuer's reference resolves to the same actor");
    assertTrue(bytes.length < 700, "three codes and two issuers take " + bytes.length + " bytes");
  }

  @Test
  void equalShardsAreEqualBytesWhateverTheOrderTheirCodesCameIn() {
    CodeShard one = CodeShard.EMPTY;
    CodeShard other = CodeShard.EMPTY;
    for (int i = 0; i < 40; i++) {
      one = one.put("code-" + i, entry(i));
      other = other.put("code-" + (39 - i), entry(39 - i));
    }
    byte[] bytes = SERIALIZATION.serialize(one.resetDelta()).get();
    assertArrayEquals(bytes, SERIALIZATION.serialize(other.resetDelta()).get(), "Distributed Data compares replicas by digests of these bytes");
    CodeShard back = (CodeShard) SERIALIZATION.deserialize(bytes, CodeShardSerializer.IDENTIFIER, "S1").get();
    assertArrayEquals(bytes, SERIALIZATION.serialize(back).get(), "a shard read back serialises to the same bytes");
  }

  private CodeEntry entry(int i) {
    return new CodeEntry(new CodeGrant("topic-" + i, List.of("read", "write"), "b" + i, 1_900_000_000L, 1_800_000_000_000L + i), i % 2 == 0 ? issuer : otherIssuer);
  }

  @Test
  void theEmptyShardAndADeltaOfOneHorizonTravelToo() {
    for (CodeShard shard : List.of(CodeShard.EMPTY, CodeShard.EMPTY.prunedTo(5).deltaData().orElseThrow())) {
      byte[] bytes = SERIALIZATION.serialize(shard).get();
      assertEquals(shard, SERIALIZATION.deserialize(bytes, CodeShardSerializer.IDENTIFIER, "S1").get());
    }
  }

  @Test
  void anUnknownLayoutIsRefusedWithAClearError() {
    CodeShardSerializer serializer = (CodeShardSerializer) SERIALIZATION.findSerializerFor(CodeShard.EMPTY);
    NotSerializableException e = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {1}, "S9"));
    assertTrue(e.getMessage().contains("S9"), e.getMessage());
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {1, 2}, "S1"), "a truncated shard");
  }
}
