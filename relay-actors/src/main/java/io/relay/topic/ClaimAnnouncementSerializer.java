package io.relay.topic;

import io.relay.WireFormat;
import io.relay.WireSerializer;
import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.ExtendedActorSystem;

/**
 * The wire form of a {@link ClaimAnnouncement}, published to every node for each topic's first
 * connection and in each node's periodic digest: the announcing node once, then each claim's
 * topic and stamp, with its node only where it is not the announcer's; strings as UTF-8 after
 * their length, no class or field names. {@link ClaimAnnouncement#inParts} keeps to this layout
 * when it splits a digest.
 *
 * <p>Manifest {@code A1} is this layout.
 */
public final class ClaimAnnouncementSerializer extends WireSerializer {
  /** The serializer's id on the wire; fixed for good once released. */
  static final int IDENTIFIER = 741_003;
  private static final String V1 = "A1";

  public ClaimAnnouncementSerializer(ExtendedActorSystem system) {
    super(system, IDENTIFIER, V1);
  }

  @Override
  public byte[] toBinary(Object o) {
    ClaimAnnouncement announcement = expect(o, ClaimAnnouncement.class);
    return WireFormat.bytes(64 + 48 * announcement.claims().size(), out -> {
      WireFormat.writeString(out, announcement.node());
      out.writeInt(announcement.claims().size());
      for (Claim claim : announcement.claims()) {
        WireFormat.writeString(out, claim.topic());
        out.writeLong(claim.stamp());
        boolean announcers = claim.node().equals(announcement.node());
        out.writeBoolean(announcers);
        if (!announcers) {
          WireFormat.writeString(out, claim.node());
        }
      }
    });
  }

  @Override
  protected Object read(String manifest, ByteBuffer in) throws NotSerializableException {
    if (!V1.equals(manifest)) {
      throw unknownLayout(manifest);
    }
    String node = WireFormat.readString(in);
    int count = in.getInt();
    List<Claim> claims = new ArrayList<>(Math.min(count, 4096));
    for (int i = 0; i < count; i++) {
      String topic = WireFormat.readString(in);
      long stamp = in.getLong();
      String claimant = in.get() != 0 ? node : WireFormat.readString(in);
      claims.add(new Claim(topic, claimant, stamp));
    }
    return new ClaimAnnouncement(node, List.copyOf(claims));
  }
}
