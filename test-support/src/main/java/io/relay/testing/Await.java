package io.relay.testing;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** Deadline-bound waits (Awaitility): every wait says what did not happen. */
public final class Await {
  private static final Duration POLL = Duration.ofMillis(50);

  private Await() {}

  /** Polls until {@code condition} holds, or fails with {@code what}; returns the milliseconds it took. */
  public static long until(String what, Duration timeout, BooleanSupplier condition) {
    return until(what, timeout, condition, () -> "");
  }

  /**
   * As {@link #until(String, Duration, BooleanSupplier)}; on a timeout the failure also carries
   * {@code lastSeen}, what the condition last observed.
   */
  public static long until(String what, Duration timeout, BooleanSupplier condition, Supplier<String> lastSeen) {
    long start = System.nanoTime();
    if (!upTo(what, timeout, condition)) {
      String seen = lastSeen.get();
      throw new AssertionError("timed out after " + timeout + " waiting until " + what + (seen.isEmpty() ? "" : "; last seen: " + seen));
    }
    return (System.nanoTime() - start) / 1_000_000;
  }

  /**
   * The value of {@code future} once it completes, or a failure saying {@code what} did not
   * happen within {@code timeout}; a future that fails rethrows its cause.
   */
  public static <T> T value(String what, Duration timeout, Future<T> future) {
    try {
      return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("timed out after " + timeout + " waiting until " + what);
    } catch (ExecutionException e) {
      throw new AssertionError(what + " failed: " + e.getCause(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Polls until {@code condition} holds or {@code timeout} has passed; whether it held. */
  public static boolean upTo(String what, Duration timeout, BooleanSupplier condition) {
    try {
      Awaitility.await(what).atMost(timeout).pollDelay(Duration.ZERO).pollInterval(POLL).until(condition::getAsBoolean);
      return true;
    } catch (ConditionTimeoutException e) {
      return false;
    }
  }

  /**
   * Lets a test run for a stated time: the period a stale ingress is observed, or the delay a
   * server asked for with {@code Retry-After}. Not a wait for a condition (use {@link #until}).
   */
  public static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
