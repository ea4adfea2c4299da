package io.relay.testing;

/**
 * The sizing of replicated shards in docs/cluster.md: keys spread by hash over a fixed number of
 * shards, so each shard's count is Poisson with mean keys / shards, and a shard is sized for the
 * fullest one, exceeded with a chance of one in a million.
 */
public final class ShardSizing {
  private static final double EXCEEDED = 1e-6;

  private ShardSizing() {}

  /** The keys of the fullest of {@code shards} shards holding {@code keys} keys. */
  public static int fullestShard(int keys, int shards) {
    double mean = (double) keys / shards;
    int k = (int) mean;
    while (shards * tail(mean, k) > EXCEEDED) {
      k++;
    }
    return k;
  }

  /** P(X > k) for X Poisson with the given mean. */
  private static double tail(double mean, int k) {
    double sum = 0;
    for (int i = k + 1; i < k + 1000; i++) {
      sum += Math.exp(-mean + i * Math.log(mean) - logFactorial(i));
    }
    return sum;
  }

  private static double logFactorial(int n) {
    double sum = 0;
    for (int i = 2; i <= n; i++) {
      sum += Math.log(i);
    }
    return sum;
  }
}
