package io.relay.deny;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * This node's view of the deny list, shard by shard: what requests are checked against. A change
 * of one shard costs in proportion to that shard, never to the whole list. Changed by {@link
 * DenyList} only; {@link #isDenied} may be called from any thread: a shard's map is never changed
 * once published, a change publishes a new one (a shard holds at most a hundred entries, and
 * changes are rare next to checks).
 *
 * <p>Changes confirmed by their writer ({@link ListChange}) are held <em>ahead</em> of the replica
 * and decide a booking's standing until the replica has the same state and has held it for {@link
 * #SETTLE} (a change notification of the replica's older value may still be on its way), or for at
 * most {@link #HOLD} (a later change that reached this node by replication alone).
 */
final class DenyView {
  /** How long the replica must have shown a change held ahead before the change is let go. */
  static final Duration SETTLE = Duration.ofSeconds(5);
  /** How long a change is held ahead at most. */
  static final Duration HOLD = Duration.ofMinutes(1);

  private record Ahead(int shard, BookingState state, long since, long matchedSince) {}

  private final AtomicReferenceArray<Map<String, BookingState>> shards;
  private volatile Map<String, Ahead> ahead = Map.of();
  private int entries;

  DenyView(int shardCount) {
    this.shards = new AtomicReferenceArray<>(shardCount);
    for (int i = 0; i < shardCount; i++) {
      shards.set(i, new HashMap<>());
    }
  }

  /**
   * Replaces the entries of one shard.
   *
   * @return the bookings of that shard that are denied now and were not before
   */
  List<String> replace(int shard, Map<String, BookingState> next, long now) {
    Map<String, BookingState> previous = shards.get(shard);
    List<String> newlyDenied = new ArrayList<>();
    for (Map.Entry<String, BookingState> entry : next.entrySet()) {
      if (isDenied(entry.getValue(), now) && !isDenied(previous.get(entry.getKey()), now)) {
        newlyDenied.add(entry.getKey());
      }
    }
    shards.set(shard, new HashMap<>(next));
    entries += next.size() - previous.size();
    return newlyDenied;
  }

  /**
   * Records one entry.
   *
   * @return whether it denies a booking that was not denied before
   */
  boolean put(int shard, String bookingId, BookingState state, long now) {
    Map<String, BookingState> next = new HashMap<>(shards.get(shard));
    BookingState previous = next.put(bookingId, state);
    shards.set(shard, next);
    if (previous == null) {
      entries++;
    }
    return isDenied(state, now) && !isDenied(previous, now);
  }

  /**
   * Holds a confirmed change ahead of the replica.
   *
   * @param nanos the time now, from {@link System#nanoTime}
   * @return whether it denies a booking that was not denied before
   */
  boolean confirm(int shard, String bookingId, BookingState state, long now, long nanos) {
    boolean before = isDenied(shard, bookingId, now);
    Map<String, Ahead> next = new HashMap<>(ahead);
    next.put(bookingId, new Ahead(shard, state, nanos, Long.MIN_VALUE));
    ahead = next;
    return isDenied(state, now) && !before;
  }

  /** Lets go of the changes held ahead that the replica has shown long enough, or held too long. */
  void settle(long nanos) {
    Map<String, Ahead> current = ahead;
    if (current.isEmpty()) {
      return;
    }
    Map<String, Ahead> next = new HashMap<>();
    current.forEach(
        (bookingId, held) -> {
          boolean matched = held.state().equals(shards.get(held.shard()).get(bookingId));
          long matchedSince = matched ? (held.matchedSince() == Long.MIN_VALUE ? nanos : held.matchedSince()) : Long.MIN_VALUE;
          boolean settled = matched && nanos - matchedSince >= SETTLE.toNanos();
          if (!settled && nanos - held.since() < HOLD.toNanos()) {
            next.put(bookingId, new Ahead(held.shard(), held.state(), held.since(), matchedSince));
          }
        });
    ahead = next.isEmpty() ? Map.of() : next;
  }

  boolean contains(int shard, String bookingId) {
    return shards.get(shard).containsKey(bookingId);
  }

  boolean isDenied(int shard, String bookingId, long now) {
    Ahead held = ahead.get(bookingId);
    return isDenied(held != null ? held.state() : shards.get(shard).get(bookingId), now);
  }

  /** Entries held, expired ones not yet swept included. */
  int entries() {
    return entries;
  }

  int entries(int shard) {
    return shards.get(shard).size();
  }

  /** Entries that have not expired. */
  int live(long now) {
    int live = 0;
    for (int shard = 0; shard < shards.length(); shard++) {
      live += live(shard, now);
    }
    return live;
  }

  int live(int shard, long now) {
    int live = 0;
    for (BookingState state : shards.get(shard).values()) {
      if (!state.expiredAt(now)) {
        live++;
      }
    }
    return live;
  }

  /** The bookings currently denied (or allowed), sorted: as {@link #isDenied} decides, a change held ahead included. */
  List<String> bookings(boolean denied, long now) {
    Map<String, Ahead> held = ahead;
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < shards.length(); i++) {
      shards.get(i).forEach(
          (id, state) -> {
            if (!held.containsKey(id) && state.denied() == denied && !state.expiredAt(now)) {
              ids.add(id);
            }
          });
    }
    held.forEach(
        (id, change) -> {
          if (change.state().denied() == denied && !change.state().expiredAt(now)) {
            ids.add(id);
          }
        });
    ids.sort(null);
    return ids;
  }

  /** The expired entries of one shard. */
  List<String> expired(int shard, long now) {
    List<String> expired = new ArrayList<>();
    shards.get(shard).forEach(
        (id, state) -> {
          if (state.expiredAt(now)) {
            expired.add(id);
          }
        });
    return expired;
  }

  private static boolean isDenied(BookingState state, long now) {
    return state != null && state.denied() && !state.expiredAt(now);
  }
}
