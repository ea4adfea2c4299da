package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.TestClusterConfig;
import java.io.NotSerializableException;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A claim announcement (one topic's first connection, or a node's digest of its topics) crosses
 * the wire compactly, the announcing node written once, and comes back whole, claims of other
 * nodes included.
 */
class ClaimAnnouncementSerializerTest {
  private static final ActorTestKit KIT = ActorTestKit.create("relay", TestClusterConfig.get());
  private static final Serialization SERIALIZATION = SerializationExtension.get(Adapter.toClassic(KIT.system()));
  private static final String NODE = "pekko://relay@10.0.12.34:25520";

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aDigestOfManyTopicsComesBackWholeAndSmall() {
    List<Claim> claims = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      claims.add(new Claim("lab/é-" + i, NODE, 1_800_000_000_000L + i));
    }
    claims.add(new Claim("lab/other", "pekko://relay@10.0.12.35:25520", 7));
    ClaimAnnouncement digest = new ClaimAnnouncement(NODE, List.copyOf(claims));
    Serializer serializer = SERIALIZATION.findSerializerFor(digest);
    assertInstanceOf(ClaimAnnouncementSerializer.class, serializer);
    byte[] bytes = SERIALIZATION.serialize(digest).get();
    assertEquals(digest, SERIALIZATION.deserialize(bytes, serializer.identifier(), "A1").get());
    assertTrue(bytes.length < 1_000 * 24, "the announcer is written once: " + bytes.length + " bytes for 1,001 claims");
  }

  @Test
  void aDigestOfThousandsOfLongTopicsGoesInPartsThatEachFitArterysFrame() {
    List<Claim> claims = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      claims.add(new Claim("lab/" + "é".repeat(120) + "-" + i, NODE, 1_800_000_000_000L + i));
    }
    claims.add(new Claim("lab/other", "pekko://relay@10.0.12.35:25520", 7));
    List<ClaimAnnouncement> parts = ClaimAnnouncement.inParts(NODE, claims);
    assertTrue(parts.size() > 1, "one digest of " + claims.size() + " long topics is several announcements");
    List<Claim> back = new ArrayList<>();
    Serializer serializer = SERIALIZATION.findSerializerFor(parts.get(0));
    for (ClaimAnnouncement part : parts) {
      byte[] bytes = SERIALIZATION.serialize(part).get();
      assertTrue(bytes.length <= ClaimAnnouncement.MAX_BYTES, bytes.length + " bytes in one part");
      assertTrue(bytes.length > ClaimAnnouncement.MAX_BYTES - 300 || part == parts.get(parts.size() - 1), "parts are filled: " + bytes.length);
      back.addAll(((ClaimAnnouncement) SERIALIZATION.deserialize(bytes, serializer.identifier(), "A1").get()).claims());
    }
    assertEquals(claims, back, "every claim, in order");
    assertEquals(List.of(new ClaimAnnouncement(NODE, List.of(claims.get(0)))), ClaimAnnouncement.inParts(NODE, List.of(claims.get(0))));
  }

  @Test
  void anUnknownOrTruncatedAnnouncementIsRefusedWithAClearError() {
    ClaimAnnouncementSerializer serializer = (ClaimAnnouncementSerializer) SERIALIZATION.findSerializerFor(new ClaimAnnouncement("n", List.of()));
    NotSerializableException unknown = assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {1}, "A9"));
    assertTrue(unknown.getMessage().contains("A9"), unknown.getMessage());
    assertThrows(NotSerializableException.class, () -> serializer.fromBinary(new byte[] {0, 3, 65, 66, 67, 0, 0, 0, 2}, "A1"), "a truncated digest");
  }
}
