package io.relay.node;

import java.time.Duration;
import java.util.function.Supplier;

/** Deadline-bound polling for tests: every wait says what did not happen. */
public final class Waits {
  private static final long POLL_MILLIS = 50;

  private Waits() {}

  /** Polls {@code condition} until true, or fails with {@code what} after {@code timeout}. */
  public static void await(String what, Duration timeout, Supplier<Boolean> condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.get()) {
        return;
      }
      pause();
    }
    throw new AssertionError("timed out after " + timeout + " waiting until " + what);
  }

  /** One polling interval. */
  public static void pause() {
    try {
      Thread.sleep(POLL_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
