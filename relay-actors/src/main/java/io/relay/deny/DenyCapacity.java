package io.relay.deny;

import io.relay.ddata.ReplicatedMaps;
import java.nio.charset.StandardCharsets;

/**
 * How many bookings the deny list holds and how they are spread over its replicated maps; the
 * arithmetic behind the numbers (each map stays well under Artery's maximum frame size) is in
 * docs/cluster.md, "Sizing the replicated maps".
 *
 * @param shards number of LWWMaps the entries are spread over by hash of the booking id; fixed for
 *     a cluster, since every node must look for a booking in the same map
 * @param total entries (denied or allowed, not yet expired) the list holds; a new booking beyond
 *     them is refused
 * @param perShard entries one map holds; a new booking whose map is full is refused, whatever the
 *     total (with evenly spread ids this is never reached below {@code total})
 */
public record DenyCapacity(int shards, int total, int perShard) {
  /** The longest booking id, in bytes of UTF-8: 128 ASCII characters (a UUID has 36). */
  public static final int MAX_BOOKING_ID_BYTES = 128;

  /** The deny list every node runs with. */
  public static final DenyCapacity DEFAULT = new DenyCapacity(256, 10_000, 96);

  public DenyCapacity {
    if (shards < 1 || total < 1 || perShard < 1) {
      throw new IllegalArgumentException("deny list capacity must be positive: " + shards + "/" + total + "/" + perShard);
    }
  }

  /** The map that holds {@code bookingId}. */
  public int shardOf(String bookingId) {
    return ReplicatedMaps.shardOf(bookingId, shards);
  }

  /** Whether {@code bookingId} is within {@link #MAX_BOOKING_ID_BYTES}. */
  public static boolean fits(String bookingId) {
    // every character takes at least one byte, so a longer string never fits
    return bookingId.length() <= MAX_BOOKING_ID_BYTES
        && bookingId.getBytes(StandardCharsets.UTF_8).length <= MAX_BOOKING_ID_BYTES;
  }
}
