package io.relay.node;

import java.time.Duration;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/** Deadline-bound waits for tests (Awaitility): every wait says what did not happen. */
public final class Waits {
  private static final Duration POLL = Duration.ofMillis(50);

  private Waits() {}

  /** Polls {@code condition} until true, or fails with {@code what} after {@code timeout}. */
  public static void await(String what, Duration timeout, Supplier<Boolean> condition) {
    await(what, timeout, condition, () -> "");
  }

  /**
   * As {@link #await(String, Duration, Supplier)}; on a timeout the failure also carries {@code
   * lastSeen}, what the condition last observed.
   */
  public static void await(String what, Duration timeout, Supplier<Boolean> condition, Supplier<String> lastSeen) {
    try {
      Awaitility.await(what).atMost(timeout).pollDelay(Duration.ZERO).pollInterval(POLL).until(condition::get);
    } catch (ConditionTimeoutException e) {
      String seen = lastSeen.get();
      throw new AssertionError(
          "timed out after " + timeout + " waiting until " + what + (seen.isEmpty() ? "" : "; last seen: " + seen), e);
    }
  }
}
