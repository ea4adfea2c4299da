package io.relay.node;

import io.relay.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Two participants of a topic of their own passing a message back and forth, without pauses,
 * while an attack runs on the same node: the round-trip latencies say whether the node kept
 * serving everyone else.
 */
final class QuietPair implements AutoCloseable {
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final List<Long> latencies = new ArrayList<>();
  private final Future<?> task;

  QuietPair(JarNode node, String topic, ExecutorService threads) {
    task =
        threads.submit(
            () -> {
              try (Participant a = Participant.connect(node.uri(topic, "read", "write"));
                  Participant b = Participant.connect(node.uri(topic, "read", "write"))) {
                for (int i = 0; running.get(); i++) {
                  long sent = System.nanoTime();
                  a.sendText("m" + i);
                  b.next();
                  synchronized (latencies) {
                    latencies.add(System.nanoTime() - sent);
                  }
                }
              }
              return null;
            });
  }

  /** Waits for the pair's first round trip, so that what follows runs while it exchanges. */
  void awaitExchanging() {
    Await.until("the quiet pair's first round trip", Duration.ofSeconds(30), () -> exchanged() > 0);
  }

  /** How many round trips the pair has made so far. */
  int exchanged() {
    synchronized (latencies) {
      return latencies.size();
    }
  }

  /** Stops the exchange; the latencies (nanoseconds) sorted, failing if the exchange failed. */
  long[] stop() throws Exception {
    running.set(false);
    Await.value("the quiet pair's exchange stops", Duration.ofSeconds(30), task);
    synchronized (latencies) {
      return latencies.stream().mapToLong(Long::longValue).sorted().toArray();
    }
  }

  /** The {@code p}th percentile of {@code sorted}, 0 for none. */
  static long percentile(long[] sorted, double p) {
    return sorted.length == 0 ? 0 : sorted[Math.max(0, Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1))];
  }

  @Override
  public void close() {
    running.set(false);
  }
}
