package io.relay.codes;

import io.relay.RelaySettings;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the code sweep ({@link CodeSweep}) saw of this node's replica (the unexpired codes of each
 * shard) and did (the shards it pruned). A shard travels as one Artery message, which Artery refuses above its maximum frame size, so
 * the fullest shard is the figure to watch (docs/cluster.md, "Sizing the replicated maps"). Read
 * by the node's metrics on any thread.
 */
public final class CodeShardStats {
  private final AtomicIntegerArray codes = new AtomicIntegerArray(RelaySettings.CODE_SHARDS);
  private final LongAdder prunes = new LongAdder();
  private final LongAdder slices = new LongAdder();

  void record(int shard, int unexpired) {
    codes.set(shard, unexpired);
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

  /** Unexpired codes in the fullest shard, as of the last sweep. */
  public long largestShard() {
    int largest = 0;
    for (int i = 0; i < codes.length(); i++) {
      largest = Math.max(largest, codes.get(i));
    }
    return largest;
  }
}
