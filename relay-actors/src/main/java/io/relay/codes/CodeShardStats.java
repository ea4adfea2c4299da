package io.relay.codes;

import io.relay.RelaySettings;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * What the code store's last sweep saw of this node's replica: the unexpired codes of each shard.
 * A shard travels as one Artery message, which Artery refuses above its maximum frame size, so
 * the fullest shard is the figure to watch (docs/cluster.md, "Sizing the replicated maps"). Read
 * by the node's metrics on any thread.
 */
public final class CodeShardStats {
  private final AtomicIntegerArray codes = new AtomicIntegerArray(RelaySettings.CODE_SHARDS);

  void record(int shard, int unexpired) {
    codes.set(shard, unexpired);
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
