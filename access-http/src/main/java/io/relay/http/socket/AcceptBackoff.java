package io.relay.http.socket;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a {@link SocketServer} port does while {@code accept} fails, most likely for want of file
 * descriptors: the connection stays in the backlog, so watching for it again at once would spin.
 * The port pauses (50 ms, doubling up to 1 s while it keeps failing) and logs one line per ten
 * seconds with the count. Used on the port's selector thread only.
 */
final class AcceptBackoff {
  private static final Logger LOG = LoggerFactory.getLogger(SocketServer.class);
  private static final long FIRST_BACKOFF = TimeUnit.MILLISECONDS.toNanos(50);
  private static final long MAX_BACKOFF = TimeUnit.SECONDS.toNanos(1);
  private static final long LOG_INTERVAL = TimeUnit.SECONDS.toNanos(10);

  private final int port;
  private final int maxConnections;
  private final SocketCounters counters;
  /** When the pause ends ({@link System#nanoTime}), or 0 when not paused. */
  private long pausedUntil;
  private long backoff;
  private long notLogged;
  private long lastLog = System.nanoTime() - LOG_INTERVAL;

  AcceptBackoff(int port, int maxConnections, SocketCounters counters) {
    this.port = port;
    this.maxConnections = maxConnections;
    this.counters = counters;
  }

  /** Whether accepting is paused after a failure. */
  boolean paused() {
    return pausedUntil != 0;
  }

  /** Nanoseconds left of the pause ({@code <= 0}: it is over), or 0 when not paused. */
  long remaining(long now) {
    return pausedUntil == 0 ? 0 : pausedUntil - now;
  }

  /** The pause is over: accepting resumes. */
  void resume() {
    pausedUntil = 0;
  }

  /** A connection was accepted: the next failure pauses for the shortest time again. */
  void accepted() {
    backoff = 0;
  }

  /** {@code accept} failed with {@code e}: pause, counted and (once an interval) logged. */
  void failed(IOException e) {
    counters.acceptFailures.increment();
    notLogged++;
    long now = System.nanoTime();
    backoff = backoff == 0 ? FIRST_BACKOFF : Math.min(2 * backoff, MAX_BACKOFF);
    pausedUntil = now + backoff;
    if (now - lastLog >= LOG_INTERVAL) {
      LOG.warn(
          "accepting connections on port {} failed {} times in the last {} s ({}); pausing up to 1 s between "
              + "attempts. 'Too many open files' means the process's descriptor limit (ulimit -n) is too low "
              + "for relay.max-connections ({})",
          port,
          notLogged,
          TimeUnit.NANOSECONDS.toSeconds(now - lastLog),
          e.getMessage(),
          maxConnections);
      lastLog = now;
      notLogged = 0;
    }
  }
}
