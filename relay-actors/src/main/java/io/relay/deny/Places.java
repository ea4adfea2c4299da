package io.relay.deny;

import java.util.HashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;

/**
 * The deny list's places: whether a new booking fits, in the list and in its shard, counting new
 * bookings whose writes are still on their way; and the write that makes room in a full shard by
 * dropping its expired entries, in the same step as the check. Owned by one {@link DenyList}; not
 * thread-safe.
 */
final class Places {
  /** A shard's map is full; thrown inside the replicator's update so the check and the write are one step. */
  static final class ShardFull extends RuntimeException {
    ShardFull() {
      super("deny list shard is full", null, false, false);
    }
  }

  private final DenyCapacity capacity;
  private final DenyView view;
  private final SelfUniqueAddress self;
  /** New bookings whose writes await their majority (with how many writes): they take places already. */
  private final Map<String, Integer> pendingNew = new HashMap<>();

  Places(DenyCapacity capacity, DenyView view, SelfUniqueAddress self) {
    this.capacity = capacity;
    this.view = view;
    this.self = self;
  }

  /** Whether a new booking of {@code shard} finds no place now, in the list or in its shard. */
  boolean full(int shard, long now) {
    return listFull(now) || view.entries(shard) >= capacity.perShard() && view.live(shard, now) >= capacity.perShard();
  }

  /** A new booking's write is on its way: it takes a place until {@link #written}. */
  void writing(String bookingId) {
    pendingNew.merge(bookingId, 1, Integer::sum);
  }

  /** A new booking's write was answered, stored or not. */
  void written(String bookingId) {
    pendingNew.computeIfPresent(bookingId, (id, writes) -> writes == 1 ? null : writes - 1);
  }

  /**
   * The update that puts the entry into a shard's map as the replicator holds it; for a new booking
   * it first makes room by dropping expired entries, and fails with {@link ShardFull} if there is
   * none.
   */
  UnaryOperator<LWWMap<String, BookingState>> put(String bookingId, BookingState state, long now) {
    int perShard = capacity.perShard();
    return map -> {
      LWWMap<String, BookingState> result = map;
      if (!map.contains(bookingId) && map.size() >= perShard) {
        for (Map.Entry<String, BookingState> entry : map.getEntries().entrySet()) {
          if (entry.getValue().expiredAt(now)) {
            result = result.remove(self, entry.getKey());
          }
        }
        if (result.size() >= perShard) {
          throw new ShardFull();
        }
      }
      return result.put(self, bookingId, state);
    };
  }

  /** Whether the list holds as many live entries (with new bookings in flight) as it may. */
  private boolean listFull(long now) {
    int pending = 0;
    for (String bookingId : pendingNew.keySet()) {
      if (!view.contains(capacity.shardOf(bookingId), bookingId)) {
        pending++; // not yet in the view by a change notification
      }
    }
    return view.entries() + pending >= capacity.total() && view.live(now) + pending >= capacity.total();
  }
}
