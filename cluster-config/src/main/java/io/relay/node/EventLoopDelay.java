package io.relay.node;

import io.netty.channel.EventLoop;
import io.prometheus.metrics.core.metrics.Histogram;
import java.util.concurrent.TimeUnit;

/**
 * How late the node's event loops run what is due on them, the first sign of a node that has more
 * to do than its cores: a loop behind delays every frame of every connection it serves. Each loop
 * runs a probe every {@link #PERIOD_MS} ms, and how long after its due time the probe ran goes
 * into {@code relay_event_loop_delay_seconds}. A loop busy without pause for longer than a
 * period (a long task, a collection, a core taken by other processes) shows as one observation
 * of that length less at most a period. Each probe wakes an idle loop: at a period of 20 ms that
 * cost W1 measurable CPU, at 100 ms nothing measurable (docs/benchmark-notes.md).
 */
final class EventLoopDelay implements Runnable {
  static final long PERIOD_MS = 100;
  private static final long PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(PERIOD_MS);

  private final EventLoop loop;
  private final Histogram delays;
  private long due;

  private EventLoopDelay(EventLoop loop, Histogram delays) {
    this.loop = loop;
    this.delays = delays;
  }

  /** Starts a probe on each of {@code loops}; each stops when its loop shuts down. */
  static void watch(Iterable<EventLoop> loops, Histogram delays) {
    for (EventLoop loop : loops) {
      EventLoopDelay probe = new EventLoopDelay(loop, delays);
      loop.execute(probe::next);
    }
  }

  @Override
  public void run() {
    delays.observe(Math.max(0, System.nanoTime() - due) / 1e9);
    next();
  }

  // runs on the loop, where a schedule is queued without a check for shutdown: the loop's
  // shutdown cancels it
  private void next() {
    due = System.nanoTime() + PERIOD_NANOS;
    loop.schedule(this, PERIOD_NANOS, TimeUnit.NANOSECONDS);
  }
}
