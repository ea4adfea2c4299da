package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The claim rules every node applies: one winner per topic, hold-down, doubling when flapping. */
class ClaimBookTest {
  private static final Duration HOLD_DOWN = Duration.ofSeconds(5);

  private static ClaimBook book(String node) {
    return new ClaimBook(node, HOLD_DOWN, Duration.ofSeconds(60), Duration.ofSeconds(60));
  }

  @Test
  void claimsInTheSameMillisecondHaveExactlyOneWinner() {
    ClaimBook a = book("pekko://relay@10.0.0.1:25520");
    ClaimBook b = book("pekko://relay@10.0.0.2:25520");
    Claim fromA = a.claim("lab", 1000);
    Claim fromB = b.claim("lab", 1000);
    ClaimBook.Verdict atA = a.judge(fromB, 1001);
    ClaimBook.Verdict atB = b.judge(fromA, 1001);
    assertTrue(
        (atA == ClaimBook.Verdict.EVICT) != (atB == ClaimBook.Verdict.EVICT),
        "exactly one node gives the topic up: " + atA + " / " + atB);
    assertEquals(ClaimBook.Verdict.EVICT, atA, "the higher address wins a tie on the stamp");
    assertEquals(ClaimBook.Verdict.REASSERT, atB, "the winner answers with its claim");
  }

  @Test
  void theNewestClaimWinsAndTheLoserIsHeldDown() {
    ClaimBook old = book("pekko://relay@10.0.0.1:25520");
    old.claim("lab", 1000);
    Claim newer = new Claim("lab", "pekko://relay@10.0.0.2:25520", 2000);
    assertEquals(ClaimBook.Verdict.EVICT, old.judge(newer, 2001));
    assertTrue(old.hosted("lab").isEmpty(), "the loser no longer hosts the topic");
    assertTrue(old.holdDown("lab", 2001 + HOLD_DOWN.toMillis() - 1).isPresent(), "refused during the hold-down");
    assertTrue(old.holdDown("lab", 2001 + HOLD_DOWN.toMillis()).isEmpty(), "accepted again after it");
    assertTrue(old.claim("lab", 1500).stamp() > newer.stamp(), "a later claim of the loser is newer than the one it lost to");
  }

  @Test
  void aTopicEvictedAgainWithinTheFlapWindowDoublesItsHoldDown() {
    ClaimBook node = book("pekko://relay@10.0.0.1:25520");
    String other = "pekko://relay@10.0.0.2:25520";
    node.claim("lab", 0);
    node.judge(new Claim("lab", other, 10), 10);
    assertFalse(node.holdDown("lab", 10).orElseThrow().flapping());
    node.claim("lab", 6000);
    node.judge(new Claim("lab", other, 7000), 7000);
    ClaimBook.HoldDown second = node.holdDown("lab", 7000).orElseThrow();
    assertTrue(second.flapping(), "evicted again within a minute: flapping");
    assertEquals(HOLD_DOWN.multipliedBy(2), second.period(), "the hold-down doubles");
  }

  @Test
  void aTopicThatGoesOnFlappingIsHeldDownForAtMostTheLongestHoldDown() {
    ClaimBook node = new ClaimBook("pekko://relay@10.0.0.1:25520", HOLD_DOWN, Duration.ofSeconds(30), Duration.ofSeconds(60));
    String other = "pekko://relay@10.0.0.2:25520";
    long now = 0;
    for (long expected : new long[] {5, 10, 20, 30, 30}) {
      node.claim("lab", now);
      node.judge(new Claim("lab", other, now + 1), now + 1);
      assertEquals(Duration.ofSeconds(expected), node.holdDown("lab", now + 1).orElseThrow().period(), "the hold-down after an eviction at " + now + " ms");
      now += expected * 1000 + 1000; // claimed again a second after the hold-down ends, within the flap window
    }
  }

  @Test
  void aDigestOfOlderClaimsChangesNothing() {
    ClaimBook node = book("pekko://relay@10.0.0.2:25520");
    Claim ours = node.claim("lab", 5000);
    assertEquals(ClaimBook.Verdict.REASSERT, node.judge(new Claim("lab", "pekko://relay@10.0.0.1:25520", 4000), 6000));
    assertEquals(ClaimBook.Verdict.IGNORE, node.judge(ours, 6000), "our own claim, heard back");
    assertEquals(ClaimBook.Verdict.IGNORE, node.judge(new Claim("other", "pekko://relay@10.0.0.1:25520", 9000), 9000), "a topic not hosted here");
    assertEquals(ours, node.hosted("lab").orElseThrow());
  }
}
