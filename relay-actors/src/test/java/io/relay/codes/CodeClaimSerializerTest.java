package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.TestClusterConfig;
import java.io.NotSerializableException;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** A claim at a code's issuer and the issuer's answer cross the wire compactly and come back whole. */
class CodeClaimSerializerTest {
  private static final ActorTestKit KIT = ActorTestKit.create("relay", TestClusterConfig.get());
  private static final Serialization SERIALIZATION = SerializationExtension.get(Adapter.toClassic(KIT.system()));

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aClaimAndBothAnswersComeBackWhole() {
    CodeStore.Claim claim =
        new CodeStore.Claim("bZ1TG2LYZQ-gk9mBsm8YDg", 1_800_000_000_123L, KIT.createTestProbe(CodeStore.ClaimAnswer.class).getRef());
    for (Object message : List.of(claim, new CodeStore.ClaimAnswer(true), new CodeStore.ClaimAnswer(false))) {
      Serializer serializer = SERIALIZATION.findSerializerFor(message);
      assertInstanceOf(CodeClaimSerializer.class, serializer, message + " is bound to the compact serializer");
      byte[] bytes = SERIALIZATION.serialize(message).get();
      assertEquals(message, SERIALIZATION.deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, message)).get());
    }
    assertTrue(SERIALIZATION.serialize(claim).get().length < 120, "a claim is its code, expiry and reply path");
  }

  @Test
  void anUnknownOrTruncatedMessageIsRefusedWithAClearError() {
    CodeClaimSerializer serializer = (CodeClaimSerializer) SERIALIZATION.findSerializerFor(new CodeStore.ClaimAnswer(true));
    NotSerializableException unknown = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {1}, "C9"));
    assertTrue(unknown.getMessage().contains("C9"), unknown.getMessage());
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {0, 40, 65}, "C1"), "a truncated claim");
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[0], "R1"), "an empty answer");
  }
}
