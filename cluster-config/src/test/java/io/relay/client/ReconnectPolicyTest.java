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
    ReconnectPolicy policy = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(350));
    long[] caps = {100, 200, 350, 350};
    for (long cap : caps) {
      long delay = policy.delayMillis(Duration.ofSeconds(1));
      assertTrue(delay >= 1000 && delay <= 1000 + cap, "a delay of " + delay + " ms after Retry-After: 1 with a cap of " + cap);
    }
    policy.connected();
    long sum = 0;
    for (int i = 0; i < 200; i++) {
      ReconnectPolicy fresh = new ReconnectPolicy(Duration.ofMillis(100), Duration.ofMillis(350));
      long delay = fresh.delayMillis(Duration.ZERO);
      assertTrue(delay >= 0 && delay <= 100, "the first delay is within the first cap: " + delay);
      sum += delay;
    }
    assertTrue(sum > 0, "the delays are jittered, not all zero");
    long afterReset = policy.delayMillis(Duration.ZERO);
    assertTrue(afterReset <= 100, "after a connection the cap is the first again: " + afterReset);
  }

  @Test
  void readsRetryAfterInSeconds() {
    assertEquals(Duration.ofSeconds(2), ReconnectPolicy.retryAfter(" 2 "));
    assertEquals(Duration.ZERO, ReconnectPolicy.retryAfter(null));
    assertEquals(Duration.ZERO, ReconnectPolicy.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT"));
    assertEquals(Duration.ZERO, ReconnectPolicy.retryAfter("-5"));
  }
}
