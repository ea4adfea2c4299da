package io.relay.harness;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** Deadline-bound waits (Awaitility): every wait says what did not happen. */
public final class Await {
  private static final Duration POLL = Duration.ofMillis(100);

  private Await() {}

  /** Polls until {@code condition} holds; returns the milliseconds it took. */
  public static long until(String what, Duration timeout, BooleanSupplier condition) {
    long start = System.nanoTime();
    if (!upTo(what, timeout, condition)) {
      throw new AssertionError("timed out after " + timeout + " waiting until " + what);
    }
    return (System.nanoTime() - start) / 1_000_000;
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
   * Lets a scenario run for a stated time: traffic before and after its event, or the period a
   * stale ingress is observed. Not a wait for a condition (use {@link #until} for those).
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
