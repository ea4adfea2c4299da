package io.relay.harness;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Deadline-bound polling: every wait says what did not happen. */
public final class Await {
  private static final long POLL_MILLIS = 100;

  private Await() {}

  /** Polls until {@code condition} holds; returns the milliseconds it took. */
  public static long until(String what, Duration timeout, BooleanSupplier condition) {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return (System.nanoTime() - start) / 1_000_000;
      }
      pause(POLL_MILLIS);
    }
    throw new AssertionError("timed out after " + timeout + " waiting until " + what);
  }

  /** Sleeps between polls, or for a scenario's stated traffic period. */
  public static void pause(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
