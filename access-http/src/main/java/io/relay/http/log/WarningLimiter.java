package io.relay.http.log;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * Rate-limits log lines that clients can cause: of each kind of line (its format), the first in
 * an interval is written and the rest are counted; one line per interval then says how many more
 * there were. A flood of bad requests so costs two lines an interval per kind, not one per request.
 *
 * <p>At most {@link #MAX_KINDS} kinds are tracked at once; lines of further kinds share one
 * window, so even kinds made up by a client cannot grow the table or the log.
 */
public final class WarningLimiter {
  static final int MAX_KINDS = 64;
  static final String OTHER = "(other kinds)";

  private final Logger log;
  private final long intervalNanos;
  private final String every;
  private final LongSupplier nanoTime;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /** The lines of one kind in the current interval. */
  private static final class Window {
    final Level level;
    long start;
    long suppressed;

    Window(Level level, long start) {
      this.level = level;
      this.start = start;
    }
  }

  WarningLimiter(Logger log, Duration interval, LongSupplier nanoTime) {
    this.log = log;
    this.every = interval.toMillis() % 1000 == 0 ? interval.toSeconds() + " s" : interval.toMillis() + " ms";
    this.intervalNanos = interval.toNanos();
    this.nanoTime = nanoTime;
  }

  /** A limiter writing to {@code log} whose counts are written every {@code interval}. */
  public static WarningLimiter start(ActorSystem<?> system, Logger log, Duration interval) {
    WarningLimiter limiter = new WarningLimiter(log, interval, System::nanoTime);
    system.scheduler().scheduleWithFixedDelay(interval, interval, limiter::flush, system.executionContext());
    return limiter;
  }

  /** A warning in SLF4J's form; its format is its kind. */
  public void warn(String format, Object... arguments) {
    log(Level.WARN, format, format, arguments);
  }

  /** An error in SLF4J's form (a last argument that is a Throwable is its cause). */
  public void error(String format, Object... arguments) {
    log(Level.ERROR, format, format, arguments);
  }

  /** Writes the line unless a line of {@code kind} was written in this interval; then counts it. */
  void log(Level level, String kind, String format, Object... arguments) {
    if (!log.isEnabledForLevel(level)) {
      return;
    }
    String key = windows.size() >= MAX_KINDS && !windows.containsKey(kind) ? OTHER : kind;
    long now = nanoTime.getAsLong();
    Window window = windows.computeIfAbsent(key, k -> new Window(level, now - intervalNanos));
    long suppressed;
    synchronized (window) {
      if (now - window.start < intervalNanos) {
        window.suppressed++;
        return;
      }
      suppressed = window.suppressed;
      window.start = now;
      window.suppressed = 0;
    }
    report(window.level, key, suppressed);
    log.atLevel(level).log(format, arguments);
  }

  /** Writes the count of each kind whose interval has ended with lines left unwritten. */
  public void flush() {
    long now = nanoTime.getAsLong();
    windows.forEach(
        (kind, window) -> {
          long suppressed;
          synchronized (window) {
            if (now - window.start < intervalNanos) {
              return;
            }
            suppressed = window.suppressed;
            window.suppressed = 0;
            if (suppressed == 0) {
              windows.remove(kind, window); // quiet for a whole interval: forget the kind
            }
          }
          report(window.level, kind, suppressed);
        });
  }

  private void report(Level level, String kind, long suppressed) {
    if (suppressed > 0) {
      log.atLevel(level)
          .log("{} more lines like \"{}\" in the last {} (rate-limited: one line of a kind per {})", suppressed, kind, every, every);
    }
  }
}
