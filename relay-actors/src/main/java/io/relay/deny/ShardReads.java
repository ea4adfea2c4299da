package io.relay.deny;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The progress of one reading of every deny list shard from a majority: which shards are left,
 * how many reads are out (at most a window of them), and the round that answers must belong to
 * (a round is abandoned when the node loses sight of a majority). Owned by {@link DenyList}; not
 * thread-safe.
 */
final class ShardReads {
  private final int shards;
  private final int window;
  private final ArrayDeque<Integer> left = new ArrayDeque<>();
  private int round;
  private boolean active;
  private int inFlight;
  private int read;
  private long started;

  ShardReads(int shards, int window) {
    this.shards = shards;
    this.window = window;
  }

  /** Starts a new round, abandoning any other, and returns it; no shard is queued yet. */
  int begin() {
    abandon();
    active = true;
    inFlight = 0;
    read = 0;
    started = System.nanoTime();
    return round;
  }

  /** Stops the current round: its answers no longer count. */
  void abandon() {
    round++;
    active = false;
    left.clear();
  }

  boolean isActive() {
    return active;
  }

  /** Whether an answer of {@code round} belongs to the reading in progress. */
  boolean isCurrent(int round) {
    return active && round == this.round;
  }

  int round() {
    return round;
  }

  /** Queues every shard. */
  void queueAll() {
    for (int shard = 0; shard < shards; shard++) {
      left.add(shard);
    }
  }

  /** The shards to read now, keeping at most a window of reads out. */
  List<Integer> next() {
    List<Integer> next = new ArrayList<>();
    while (inFlight < window && !left.isEmpty()) {
      next.add(left.poll());
      inFlight++;
    }
    return next;
  }

  /**
   * A shard was read from a majority.
   *
   * @return whether every shard has now been read (the round is then over)
   */
  boolean succeeded() {
    inFlight--;
    read++;
    if (read == shards) {
      active = false;
      return true;
    }
    return false;
  }

  /** A read failed; the shard is asked again later with {@link #again(int)}. */
  void failed() {
    inFlight--;
  }

  void again(int shard) {
    left.add(shard);
  }

  long elapsedMillis() {
    return (System.nanoTime() - started) / 1_000_000;
  }
}
