package io.relay.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where the cluster says each topic is, sampled on a schedule ({@code GET /status}, {@link
 * ClusterView}, at the given access URLs in turn) from now until closed: every sample in which a
 * topic was reported on two nodes at once is kept, with when it was taken.
 */
public final class PlacementWatch implements AutoCloseable {
  private static final Duration LAST_SAMPLE = Duration.ofSeconds(15);

  private final List<String> accessUrls;
  private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
  private final long started = System.nanoTime();
  private final AtomicLong samples = new AtomicLong();
  private final AtomicLong incomplete = new AtomicLong();
  private final List<String> onTwoNodes = new ArrayList<>();

  /** Samples one of {@code accessUrls} (in turn) every {@code period}, on a thread of its own. */
  public PlacementWatch(List<String> accessUrls, Duration period) {
    this.accessUrls = List.copyOf(accessUrls);
    sampler.scheduleWithFixedDelay(this::sample, 0, period.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void sample() {
    long n = samples.getAndIncrement();
    String url = accessUrls.get((int) (n % accessUrls.size()));
    ClusterView.Snapshot snapshot = ClusterView.status(url);
    if (!snapshot.missingNodes().isEmpty()) {
      incomplete.incrementAndGet();
    }
    for (Map.Entry<String, Set<String>> topic : snapshot.nodesByTopic().entrySet()) {
      if (topic.getValue().size() > 1) {
        synchronized (onTwoNodes) {
          onTwoNodes.add(String.format("%s on %s at %.1f s (from %s)", topic.getKey(), topic.getValue(), (System.nanoTime() - started) / 1e9, url));
        }
      }
    }
  }

  /** Samples taken (or under way). */
  public long samples() {
    return samples.get();
  }

  /** Samples in which a node did not answer in time or the status request failed. */
  public long incomplete() {
    return incomplete.get();
  }

  /** Each topic seen on more than one node in one sample, with the nodes and when (empty: none). */
  public List<String> onTwoNodes() {
    synchronized (onTwoNodes) {
      return List.copyOf(onTwoNodes);
    }
  }

  /** Stops sampling and waits for a sample under way. */
  @Override
  public void close() {
    sampler.shutdown();
    try {
      if (!sampler.awaitTermination(LAST_SAMPLE.toSeconds(), TimeUnit.SECONDS)) {
        throw new AssertionError("the last placement sample did not finish within " + LAST_SAMPLE);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
