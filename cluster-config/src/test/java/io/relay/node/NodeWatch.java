package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Samples a node every 100 ms until closed, as a load balancer and Prometheus would: whether
 * {@code /ready} answered 200 (each other answer is kept, with when and how long it took), the
 * slowest answer, and the peak of each metric it is given. Closing it fails if a sample failed
 * (then no later one was taken) or none was taken.
 */
final class NodeWatch implements AutoCloseable {
  private static final long PERIOD_MS = 100;

  private final JarNode node;
  private final String[] peaked;
  private final Map<String, AtomicLong> peaks = new ConcurrentHashMap<>();
  private final StringBuilder unreadyAnswers = new StringBuilder();
  private final AtomicLong slowestReady = new AtomicLong();
  private final AtomicLong samples = new AtomicLong();
  private final long started = System.nanoTime();
  private final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  NodeWatch(JarNode node, String... peaked) {
    this.node = node;
    this.peaked = peaked;
    for (String metric : peaked) {
      peaks.put(metric, new AtomicLong());
    }
    sampler.scheduleAtFixedRate(this::sample, 0, PERIOD_MS, TimeUnit.MILLISECONDS);
  }

  private void sample() {
    try {
      sampleOnce();
    } catch (Throwable e) {
      failure.compareAndSet(null, e);
      throw e; // no further samples: close() fails
    }
  }

  private void sampleOnce() {
    for (String metric : peaked) {
      peaks.get(metric).accumulateAndGet((long) node.metric(metric), Math::max);
    }
    long asked = System.nanoTime();
    int status = node.status("/ready");
    slowestReady.accumulateAndGet(System.nanoTime() - asked, Math::max);
    samples.incrementAndGet();
    if (status != 200) {
      synchronized (unreadyAnswers) {
        unreadyAnswers.append(
            String.format(" [%d after %d ms at %.1f s]", status, (System.nanoTime() - asked) / 1_000_000, (asked - started) / 1e9));
      }
    }
  }

  /** Whether every sample of /ready answered 200. */
  boolean readyThroughout() {
    synchronized (unreadyAnswers) {
      return unreadyAnswers.length() == 0;
    }
  }

  /** The answers of /ready other than 200, for a failure message. */
  String unreadyAnswers() {
    synchronized (unreadyAnswers) {
      return unreadyAnswers.toString();
    }
  }

  long samples() {
    return samples.get();
  }

  long slowestReadyMillis() {
    return slowestReady.get() / 1_000_000;
  }

  long peak(String metric) {
    return peaks.get(metric).get();
  }

  @Override
  public void close() throws InterruptedException {
    // no interrupt: an interrupted sample would read as a node that did not answer
    sampler.shutdown();
    assertTrue(sampler.awaitTermination(30, TimeUnit.SECONDS), "the last sample of the node finished within 30 s");
    assertNull(failure.get(), () -> "sampling the node failed, so what it saw says nothing: " + failure.get());
    assertTrue(samples.get() > 0, "the node was sampled");
  }
}
