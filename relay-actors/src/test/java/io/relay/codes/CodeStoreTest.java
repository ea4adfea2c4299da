package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.relay.RelaySettings;
import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The code store on a one-node cluster, its clock in the test's hands: a code is redeemed once,
 * for its topic only, before it expires; its issuer grants the first claim of a code only; a code
 * whose issuer is an earlier incarnation of the node is refused; the sweep removes expired codes and
 * reports what is left. The race between two nodes is in {@code ClusterTest}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CodeStoreTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long NOW = 1_800_000_000_000L;

  private final AtomicLong clock = new AtomicLong(NOW);
  private ActorTestKit kit;
  private ActorRef<CodeStore.Command> codes;
  private RelaySettings settings;

  @BeforeAll
  void start() {
    Config config = TestClusterConfig.get();
    kit = ActorTestKit.create("code-store-test", config);
    settings = RelaySettings.create(config);
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertEquals("Up", cluster.selfMember().status().toString(), "the node is up");
      return null;
    });
    codes = kit.spawn(CodeStore.create(settings, clock::get));
  }

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  /** Issues a code for {@code topic} at {@code store}; the code it minted. */
  private String issue(ActorRef<CodeStore.Command> store, String topic) {
    TestProbe<CodeStore.Issued> issued = kit.createTestProbe();
    store.tell(new CodeStore.Issue(topic, List.of("read"), "booking", NOW / 1000 + 3600, issued.ref()));
    CodeStore.Issued answer = issued.receiveMessage(WAIT);
    assertTrue(answer instanceof CodeStore.Stored, "stored in the node's replica: " + answer);
    return ((CodeStore.Stored) answer).code();
  }

  private String issue(String topic) {
    return issue(codes, topic);
  }

  /** What a code of {@code topic} issued now grants. */
  private CodeGrant grant(String topic) {
    return new CodeGrant(topic, List.of("read"), "booking", NOW / 1000 + 3600, clock.get() + settings.codeTtl().toMillis());
  }

  private CodeStore.Redemption redeem(String code, String topic) {
    return Redeeming.redeem(kit, codes, code, topic);
  }

  @Test
  void aCodeIsMintedAndRedeemedOnceWithWhatItGrants() {
    String code = issue("lab/once");
    assertTrue(code.matches("[A-Za-z0-9_-]{32}"), "128 bits and the node's id, URL-safe Base64: " + code);
    assertEquals(java.util.OptionalLong.of(Cluster.get(kit.system()).selfMember().uniqueAddress().longUid()), CodeFormat.issuerOf(code), "the code names its issuer");
    assertTrue(!code.equals(issue("lab/once")), "every code is new");
    assertEquals(new CodeStore.Redeemed(grant("lab/once")), redeem(code, "lab/once"), "what the token granted, until the code TTL");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.USED), redeem(code, "lab/once"));
  }

  @Test
  void aCodeIsForItsTopicOnlyAndAWrongTopicDoesNotUseItUp() {
    String code = issue("lab/right");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.WRONG_TOPIC), redeem(code, "lab/wrong"));
    assertEquals(CodeStore.Redeemed.class, redeem(code, "lab/right").getClass());
  }

  @Test
  void anExpiredCodeIsRefused() {
    String code = issue("lab/late");
    clock.addAndGet(settings.codeTtl().toMillis());
    try {
      assertEquals(new CodeStore.Rejected(CodeStore.Reason.EXPIRED), redeem(code, "lab/late"));
    } finally {
      clock.set(NOW);
    }
  }

  @Test
  void anUnknownCodeIsRefused() {
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN), redeem("never-issued", "lab/none"));
  }

  @Test
  void aCodeOfTheRightLengthThatIsNoCodeIsRefusedAndTheStoreGoesOn() {
    // padded Base64 of a code's length decodes to fewer bytes than a code holds; then characters outside Base64
    for (String notACode : new String[] {"A".repeat(30) + "==", "A".repeat(31) + "=", "A".repeat(31) + "!", "=".repeat(32)}) {
      assertEquals(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN), redeem(notACode, "lab/forged"), notACode);
    }
    String code = issue("lab/after-forged");
    assertEquals(CodeStore.Redeemed.class, redeem(code, "lab/after-forged").getClass(), "the store still issues and redeems codes");
  }

  @Test
  void theIssuerGrantsTheFirstClaimOfACodeOnly() {
    TestProbe<CodeStore.ClaimAnswer> first = kit.createTestProbe();
    TestProbe<CodeStore.ClaimAnswer> second = kit.createTestProbe();
    codes.tell(new CodeStore.Claim("claimed", NOW + 30_000, first.ref()));
    codes.tell(new CodeStore.Claim("claimed", NOW + 30_000, second.ref()));
    assertEquals(new CodeStore.ClaimAnswer(true), first.receiveMessage(WAIT));
    assertEquals(new CodeStore.ClaimAnswer(false), second.receiveMessage(WAIT));
  }

  @Test
  void theIssuerGrantsNoClaimOfACodeThatHasExpiredByItsClock() {
    // a redeemer whose clock is behind still takes the code for live; the issuer, which forgets
    // claimed codes once they expire, must not grant it (again) then
    TestProbe<CodeStore.ClaimAnswer> answer = kit.createTestProbe();
    codes.tell(new CodeStore.Claim("expired-here", NOW, answer.ref()));
    assertEquals(new CodeStore.ClaimAnswer(false), answer.receiveMessage(WAIT), "expiring now");
    codes.tell(new CodeStore.Claim("expired-earlier", NOW - 5_000, answer.ref()));
    assertEquals(new CodeStore.ClaimAnswer(false), answer.receiveMessage(WAIT), "expired five seconds ago");
  }

  private CodeStore.Redemption claimUnseen(String code, String topic) {
    TestProbe<CodeStore.Redemption> answer = kit.createTestProbe();
    codes.tell(new CodeStore.ClaimUnseen(code, topic, answer.ref()));
    return answer.receiveMessage(WAIT);
  }

  @Test
  void asTheIssuerItGrantsAnUnseenCodeOnceForItsTopicBeforeItExpires() {
    String code = issue("lab/unseen");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.WRONG_TOPIC), claimUnseen(code, "lab/other"), "a wrong topic does not use it up");
    assertEquals(new CodeStore.Redeemed(grant("lab/unseen")), claimUnseen(code, "lab/unseen"), "the answer carries what the code grants");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.USED), claimUnseen(code, "lab/unseen"));
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.USED), redeem(code, "lab/unseen"), "one decision, whichever way the claim came");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN), claimUnseen("bZ1TG2LYZQ-gk9mBsm8YDgAAAAAAAAAq", "lab/unseen"));

    String late = issue("lab/unseen");
    clock.addAndGet(settings.codeTtl().toMillis());
    try {
      assertEquals(new CodeStore.Rejected(CodeStore.Reason.EXPIRED), claimUnseen(late, "lab/unseen"));
    } finally {
      clock.set(NOW);
    }
  }

  @Test
  void aCodeNamingANodeThatIsNotAMemberIsRefusedAsIssuerGone() {
    String code = issue("lab/named");
    byte[] bytes = java.util.Base64.getUrlDecoder().decode(code);
    bytes[bytes.length - 1] ^= 1;
    String elsewhere = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.ISSUER_GONE), redeem(elsewhere, "lab/named"), "no member has that id");
  }

  @Test
  void aCodeIssuedByAnEarlierIncarnationOfThisNodeIsRefused() {
    // the store that issued it has gone (the node restarted); this node's new store cannot answer for it
    ActorRef<CodeStore.Command> earlier = kit.spawn(CodeStore.create(settings, clock::get));
    String code = issue(earlier, "lab/orphan");
    kit.stop(earlier);
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.ISSUER_GONE), redeem(code, "lab/orphan"));
  }
  @Test
  void theSweepRemovesExpiredCodesFromTheReplicaAndReportsWhatIsLeft() {
    ActorTestKit node = ActorTestKit.create("code-sweep-test", TestClusterConfig.with(Map.of("relay.code-sweep-interval", "100ms")));
    try {
      joinAlone(node);
      AtomicLong time = new AtomicLong(NOW);
      CodeShardStats stats = new CodeShardStats();
      RelaySettings sweepingOften = RelaySettings.create(node.system().settings().config());
      ActorRef<CodeStore.Command> store = node.spawn(CodeStore.create(sweepingOften, time::get));
      node.spawn(CodeSweep.create(sweepingOften, time::get, stats));
      TestProbe<CodeStore.Issued> issued = node.createTestProbe();
      List<String> minted = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        store.tell(new CodeStore.Issue("lab/swept", List.of("read"), "booking", NOW / 1000 + 3600, issued.ref()));
        minted.add(((CodeStore.Stored) issued.receiveMessage(WAIT)).code());
      }
      Await.until("the sweep counts the three codes", WAIT, () -> stats.codes() == 3, () -> stats.codes() + " codes");
      assertTrue(stats.largestShard() >= 1 && stats.largestShard() <= 3, "the fullest shard holds " + stats.largestShard());

      time.addAndGet(sweepingOften.codeTtl().toMillis());
      Await.until("the sweep counts no unexpired code", WAIT, () -> stats.codes() == 0, () -> stats.codes() + " codes");
      assertEquals(new CodeStore.Rejected(CodeStore.Reason.EXPIRED), Redeeming.redeem(node, store, minted.get(0), "lab/swept"), "kept a sweep interval past its expiry");
      time.addAndGet(sweepingOften.codeSweepInterval().toMillis());
      Await.until(
          "the sweep removes the expired codes from the replica",
          WAIT,
          () -> Redeeming.redeem(node, store, minted.get(0), "lab/swept").equals(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN)));
    } finally {
      node.shutdownTestKit();
    }
  }

  @Test
  void aSweeperWhoseClockIsAheadByUpToTheSweepIntervalLeavesCodesAloneUntilTheyExpireByTheIssuersClock() {
    ActorTestKit node = ActorTestKit.create("code-skew-test", TestClusterConfig.with(Map.of("relay.code-sweep-interval", "1s")));
    try {
      joinAlone(node);
      RelaySettings sweeping = RelaySettings.create(node.system().settings().config());
      long interval = sweeping.codeSweepInterval().toMillis();
      AtomicLong time = new AtomicLong(NOW);
      ActorRef<CodeStore.Command> store = node.spawn(CodeStore.create(sweeping, time::get));
      CodeShardStats ahead = new CodeShardStats();
      node.spawn(CodeSweep.create(sweeping, () -> time.get() + interval, ahead));
      TestProbe<CodeStore.Issued> issued = node.createTestProbe();
      store.tell(new CodeStore.Issue("lab/skew", List.of("read"), "booking", NOW / 1000 + 3600, issued.ref()));
      String code = ((CodeStore.Stored) issued.receiveMessage(WAIT)).code();
      Await.until("the sweeper to count the live code", WAIT, () -> ahead.codes() == 1, () -> ahead.codes() + " codes");
      // the last millisecond of the code's life by the issuer's clock: expired by the sweeper's
      time.set(NOW + sweeping.codeTtl().toMillis() - 1);
      long swept = ahead.slicesSwept();
      Await.until("the sweeper to count the code expired", WAIT, () -> ahead.codes() == 0, () -> ahead.codes() + " codes");
      Await.until("a whole round of the sweep after that", WAIT, () -> ahead.slicesSwept() >= swept + 2L * CodeSweep.SLICES);
      assertTrue(Redeeming.redeem(node, store, code, "lab/skew") instanceof CodeStore.Redeemed, "still in the replica: redeemed");
      assertEquals(0, ahead.horizonAheadSeconds(), "no horizon ahead of the sweeper's own clock");
    } finally {
      node.shutdownTestKit();
    }
  }

  @Test
  void aClockFarAheadShowsInTheHorizonAndCodesIssuedPastThatHorizonAreRefusedInsteadOfLost() {
    ActorTestKit node = ActorTestKit.create("code-far-skew-test", TestClusterConfig.with(Map.of("relay.code-sweep-interval", "1s")));
    try {
      joinAlone(node);
      RelaySettings sweeping = RelaySettings.create(node.system().settings().config());
      AtomicLong time = new AtomicLong(NOW);
      ActorRef<CodeStore.Command> store = node.spawn(CodeStore.create(sweeping, time::get));
      CodeShardStats here = new CodeShardStats();
      node.spawn(CodeSweep.create(sweeping, time::get, here));
      TestProbe<CodeStore.Issued> issued = node.createTestProbe();
      for (int i = 0; i < 300; i++) {
        store.tell(new CodeStore.Issue("lab/far", List.of("read"), "booking", NOW / 1000 + 7200, issued.ref()));
        assertTrue(issued.receiveMessage(WAIT) instanceof CodeStore.Stored, "stored before any shard was pruned ahead");
      }
      // then another node's sweep, its clock an hour ahead: it prunes every shard that holds a code
      node.spawn(CodeSweep.create(sweeping, () -> time.get() + 3_600_000, new CodeShardStats()));
      Await.until(
          "this node's sweep to see a horizon about an hour ahead of its clock",
          WAIT,
          () -> here.horizonAheadSeconds() > 3_500,
          () -> here.horizonAheadSeconds() + " s");
      CodeStore.Issued refused = null;
      for (int i = 0; i < 2_000 && refused == null; i++) {
        store.tell(new CodeStore.Issue("lab/far", List.of("read"), "booking", NOW / 1000 + 7200, issued.ref()));
        CodeStore.Issued answer = issued.receiveMessage(WAIT);
        refused = answer instanceof CodeStore.Unavailable ? answer : null;
      }
      assertEquals(CodeStore.Unavailable.INSTANCE, refused, "a code that falls in a shard pruned past its expiry is refused, not answered as stored");
    } finally {
      node.shutdownTestKit();
    }
  }

  private static void joinAlone(ActorTestKit node) {
    Cluster cluster = Cluster.get(node.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Await.until("the node is up", WAIT, () -> "Up".equals(cluster.selfMember().status().toString()));
  }
}
