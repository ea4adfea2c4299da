package io.relay.http;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * When files read at the start are read again: at most once per {@code
 * relay.secret-reload-interval}, by whichever caller first finds the interval passed; the others go
 * on with what was read before. For the token secrets ({@link TokenKeys}) and the TLS certificate
 * and key ({@link TlsContext}).
 */
final class ReloadInterval {
  private final long nanos;
  private final LongSupplier nanoClock;
  private final AtomicLong next;

  /** @param nanoClock the clock, in nanoseconds ({@link System#nanoTime}; a test's own) */
  ReloadInterval(Duration interval, LongSupplier nanoClock) {
    this.nanos = interval.toNanos();
    this.nanoClock = nanoClock;
    this.next = new AtomicLong(nanoClock.getAsLong() + nanos);
  }

  /** True for the one caller that is to read the files again now. */
  boolean due() {
    long now = nanoClock.getAsLong();
    long at = next.get();
    return now - at >= 0 && next.compareAndSet(at, now + nanos);
  }
}
