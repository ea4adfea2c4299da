package io.relay.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.ws.CloseCodes;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** When a client reconnects: by close code, and the jittered backoff's caps. */
class ReconnectPolicyTest {
  @Test
  void reconnectsAtOnceAfterAMoveNeverAfterADenyOtherwiseLater() {
    assertEquals(ReconnectPolicy.Next.NOW, ReconnectPolicy.afterClose(CloseCodes.TOPIC_MOVED));
    assertEquals(ReconnectPolicy.Next.STOP, ReconnectPolicy.afterClose(CloseCodes.BOOKING_DENIED));
    for (int code : new int[] {CloseCodes.NORMAL, CloseCodes.GOING_AWAY, 1006, CloseCodes.TOKEN_EXPIRED, CloseCodes.TRY_AGAIN_LATER}) {
      assertEquals(ReconnectPolicy.Next.LATER, ReconnectPolicy.afterClose(code), "after " + code);
    }
  }

  @Test
  void eachFailureDoublesTheCapUpToTheLastAndAConnectionResetsIt() {
    long[] caps = {100, 200, 350, 350};
    for (int failures = 0; failures < caps.length; failures++) {
      long largest = largestDelay(failures, false);
      assertTrue(largest <= caps[failures] && largest > caps[failures] * 9 / 10,
          "after " + failures + " failures the delays reach up to the cap of " + caps[failures] + " ms: " + largest);
    }
    long reset = largestDelay(3, true);
    assertTrue(reset <= 100 && reset > 90, "after a connection the cap is the first again: " + reset);
    ReconnectPolicy policy = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(350));
    long delay = policy.delayMillis(Duration.ofSeconds(1));
    assertTrue(delay >= 1000 && delay <= 1100, "the jitter is on top of what Retry-After: 1 asks for: " + delay);
  }

  /**
   * The largest of 500 delays of policies that failed {@code failures} times (then connected, if
   * {@code connected}): with the delays drawn evenly up to the cap, as good as the cap itself.
   */
  private static long largestDelay(int failures, boolean connected) {
    long largest = 0;
    for (int i = 0; i < 500; i++) {
      ReconnectPolicy policy = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(350));
      for (int f = 0; f < failures; f++) {
        policy.delayMillis(Duration.ZERO);
      }
      if (connected) {
        policy.connected();
      }
      largest = Math.max(largest, policy.delayMillis(Duration.ZERO));
    }
    return largest;
  }

  @Test
  void readsRetryAfterInSeconds() {
    assertEquals(Duration.ofSeconds(2), ReconnectPolicy.retryAfter(" 2 "));
    assertEquals(Duration.ZERO, ReconnectPolicy.retryAfter(null));
    assertEquals(Duration.ZERO, ReconnectPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT"));
    assertEquals(Duration.ZERO, ReconnectPolicy.retryAfter("-5"));
  }

  @Test
  void aRetryAfterPastTenMinutesIsTakenAsTenAndStillGivesADelay() {
    Duration huge = ReconnectPolicy.retryAfter(String.valueOf(Long.MAX_VALUE));
    assertEquals(ReconnectPolicy.MAX_RETRY_AFTER, huge);
    long delay = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofSeconds(2)).delayMillis(huge);
    assertTrue(delay >= huge.toMillis() && delay <= huge.toMillis() + 100, "the cap's wait and the backoff's jitter: " + delay);
  }
}
