package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.relay.RelaySettings;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.TestClusterConfig;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Two nodes whose replicas never exchange codes (no delta propagation, no gossip within the test):
 * a code issued on one is redeemed on the other through its issuer, which answers with what the
 * code grants and decides its single use, whichever node it is presented to next.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CodeStoreAcrossNodesTest {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final Map<String, Object> NO_REPLICATION =
      Map.of("pekko.cluster.distributed-data.delta-crdt.enabled", "off", "pekko.cluster.distributed-data.gossip-interval", "1h");

  private ActorTestKit issuerNode;
  private ActorTestKit otherNode;
  private ActorRef<CodeStore.Command> issuer;
  private ActorRef<CodeStore.Command> other;
  private final RelayMetrics otherMetrics = new RelayMetrics();

  @BeforeAll
  void start() {
    issuerNode = ActorTestKit.create("relay", TestClusterConfig.with(NO_REPLICATION));
    otherNode = ActorTestKit.create("relay", TestClusterConfig.with(NO_REPLICATION));
    TwoNodes.join(issuerNode, otherNode, WAIT);
    RelaySettings settings = RelaySettings.create(issuerNode.system().settings().config());
    // every node runs its code store under the same name: a redeemer finds the issuer's by path
    issuer = issuerNode.spawn(CodeStore.create(settings, System::currentTimeMillis), "codes");
    other = otherNode.spawn(CodeStore.create(settings, System::currentTimeMillis, otherMetrics), "codes");
  }

  @AfterAll
  void stop() {
    otherNode.shutdownTestKit();
    issuerNode.shutdownTestKit();
  }

  private String issue(String topic) {
    TestProbe<CodeStore.Issued> issued = issuerNode.createTestProbe();
    issuer.tell(new CodeStore.Issue(topic, List.of("read"), "booking", 1_900_000_000L, issued.ref()));
    return assertInstanceOf(CodeStore.Stored.class, issued.receiveMessage(WAIT)).code();
  }

  @Test
  void aCodeTheReplicaHasNotSeenIsRedeemedThroughItsIssuerOnce() {
    String code = issue("lab/across");
    double before = otherMetrics.codeLookups.labelValues("issuer").get();
    CodeStore.Redemption redeemed = Redeeming.redeem(otherNode, other, code, "lab/across");
    CodeGrant grant = assertInstanceOf(CodeStore.Redeemed.class, redeemed, "the issuer grants it").grant();
    assertEquals("lab/across", grant.topic());
    assertEquals(List.of("read"), grant.scopes());
    assertEquals("booking", grant.bookingId());
    assertEquals(before + 1, otherMetrics.codeLookups.labelValues("issuer").get(), "found at the issuer, not in the replica");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.USED), Redeeming.redeem(otherNode, other, code, "lab/across"), "a second time on the same node");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.USED), Redeeming.redeem(issuerNode, issuer, code, "lab/across"), "a second time at the issuer");
  }

  @Test
  void aWrongTopicAtAnotherNodeDoesNotUseTheCodeUp() {
    String code = issue("lab/right");
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.WRONG_TOPIC), Redeeming.redeem(otherNode, other, code, "lab/wrong"));
    assertInstanceOf(CodeStore.Redeemed.class, Redeeming.redeem(otherNode, other, code, "lab/right"));
  }

  @Test
  void aCodeTheIssuerNeverMintedIsUnknown() {
    String code = issue("lab/real");
    byte[] bytes = java.util.Base64.getUrlDecoder().decode(code);
    bytes[0] ^= 1;
    String forged = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    assertEquals(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN), Redeeming.redeem(otherNode, other, forged, "lab/real"), "the issuer's id with other random bits");
  }
}
