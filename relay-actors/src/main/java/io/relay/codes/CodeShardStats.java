package io.relay.codes;

import io.relay.RelaySettings;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the code sweep ({@link CodeSweep}) saw of this node's replica (the unexpired codes of each
 * shard) and did (the shards it pruned). A shard travels as one Artery message, which Artery refuses above its maximum frame size, so
 * the fullest shard is the figure to watch (docs/cluster.md, "Sizing the replicated maps"). Read
 * by the node's metrics on any thread.
 */
public final class CodeShardStats {
  private final AtomicIntegerArray codes = new AtomicIntegerArray(RelaySettings.CODE_SHARDS);
  /** Per shard, milliseconds its horizon was ahead of this node's clock at the last sweep (0 if behind). */
  private final AtomicLongArray horizonAhead = new AtomicLongArray(RelaySettings.CODE_SHARDS);
  private final LongAdder prunes = new LongAdder();
  private final LongAdder slices = new LongAdder();

  /** @param horizonAheadMillis how far the shard's horizon is ahead of this node's clock, 0 if it is not */
  void record(int shard, int unexpired, long horizonAheadMillis) {
    codes.set(shard, unexpired);
    horizonAhead.set(shard, horizonAheadMillis);
  }

  void pruned() {
    prunes.increment();
  }

  void sweptSlice() {
    slices.increment();
  }

  /** Slices of the shards this node's sweep has gone through. */
  long slicesSwept() {
    return slices.sum();
  }

  /** Shards this node has pruned of expired codes (each a replicated change). */
  public long prunes() {
    return prunes.sum();
  }

  /** Unexpired codes in this node's replica, as of the last sweep. */
  public long codes() {
    long total = 0;
    for (int i = 0; i < codes.length(); i++) {
      total += codes.get(i);
    }
    return total;
  }

  /**
   * How far the furthest shard's pruning horizon was ahead of this node's clock at the last sweep,
   * in whole seconds rounded up; 0 when none was. More than 0 means a node's clock is ahead of this one's by more
   * than {@code relay.code-sweep-interval} by that much: codes this node issued may be gone before
   * they expire by its clock, and once it is more than {@code relay.code-ttl} ahead, codes it
   * issues into such a shard are refused (503).
   */
  public long horizonAheadSeconds() {
    long furthest = 0;
    for (int i = 0; i < horizonAhead.length(); i++) {
      furthest = Math.max(furthest, horizonAhead.get(i));
    }
    return (furthest + 999) / 1000;
  }

  /** Unexpired codes in the fullest shard, as of the last sweep. */
  public long largestShard() {
    int largest = 0;
    for (int i = 0; i < codes.length(); i++) {
      largest = Math.max(largest, codes.get(i));
    }
    return largest;
  }
}
