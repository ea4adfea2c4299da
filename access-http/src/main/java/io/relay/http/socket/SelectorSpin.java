package io.relay.http.socket;

import java.util.concurrent.TimeUnit;

/**
 * Whether a selector thread about to wait for its sockets first polls them for a while
 * ({@code relay.socket-selector-spin}): only while its own work took at least half of the last
 * {@link #WINDOW_NANOS}. A thread that is that busy relays one stream or a few that keep it
 * working, and when it blocks each time it has caught up with them, the core it leaves is taken
 * by another thread and the next frame waits for a wake-up and a core; polling for a few tens of
 * microseconds keeps its core and finds the next frame at once. A thread that is mostly idle
 * blocks at once, so idle and lightly loaded ports cost nothing more. On one selector thread only.
 */
final class SelectorSpin {
  /** How long a stretch of the thread's time its busy share is measured over. */
  static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private final long spinNanos;
  private long windowStart;
  private long workNanos;
  private boolean busy;

  /** @param spinNanos how long to poll before waiting, 0 for never */
  SelectorSpin(long spinNanos, long now) {
    this.spinNanos = spinNanos;
    this.windowStart = now;
  }

  /** How long the thread polls before its next wait: 0 unless it has been busy. */
  long nanos() {
    return busy ? spinNanos : 0;
  }

  /** Counts a round of work, from when the wait before it ended to {@code end}. */
  void worked(long start, long end) {
    workNanos += end - start;
    long window = end - windowStart;
    if (window >= WINDOW_NANOS) {
      busy = spinNanos > 0 && 2 * workNanos >= window;
      windowStart = end;
      workNanos = 0;
    }
  }
}
