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

/** The claims at a code's issuer and the issuer's answers cross the wire compactly and come back whole. */
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
  void aClaimOfAnUnseenCodeAndItsAnswersComeBackWhole() {
    CodeStore.ClaimUnseen claim =
        new CodeStore.ClaimUnseen("bZ1TG2LYZQ-gk9mBsm8YDgAAAAAAAAAq", "lab/x", KIT.createTestProbe(CodeStore.Redemption.class).getRef());
    List<Object> messages = new java.util.ArrayList<>(List.of(
        claim, new CodeStore.Redeemed(new CodeGrant("lab/x", List.of("read", "write"), "booking-7", 1_800_000_000L, 1_800_000_000_123L))));
    for (CodeStore.Reason reason : CodeStore.Reason.values()) {
      messages.add(new CodeStore.Rejected(reason));
    }
    for (Object message : messages) {
      Serializer serializer = SERIALIZATION.findSerializerFor(message);
      assertInstanceOf(CodeClaimSerializer.class, serializer, message + " is bound to the compact serializer");
      byte[] bytes = SERIALIZATION.serialize(message).get();
      assertEquals(message, SERIALIZATION.deserialize(bytes, serializer.identifier(), Serializers.manifestFor(serializer, message)).get());
    }
    assertEquals(1, SERIALIZATION.serialize(new CodeStore.Rejected(CodeStore.Reason.USED)).get().length, "a refusal is one byte");
  }

  @Test
  void anUnknownOrTruncatedMessageIsRefusedWithAClearError() {
    CodeClaimSerializer serializer = (CodeClaimSerializer) SERIALIZATION.findSerializerFor(new CodeStore.ClaimAnswer(true));
    NotSerializableException unknown = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {1}, "C9"));
    assertTrue(unknown.getMessage().contains("C9"), unknown.getMessage());
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {0, 40, 65}, "C1"), "a truncated claim");
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[0], "R1"), "an empty answer");
    NotSerializableException reason = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {99}, "J1"));
    assertTrue(reason.getMessage().contains("99"), "a refusal from a newer version: " + reason.getMessage());
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {0, 5, 'l', 'a'}, "G1"), "a truncated grant");
  }
}
