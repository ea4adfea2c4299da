package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.remote.RemoteActorRefProvider;
import org.apache.pekko.remote.transport.ThrottlerTransportAdapter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A node cut off from a majority of its cluster (three nodes in this JVM; the network between one
 * and the two others is cut with Artery's test transport) cannot tell a cancelled booking: it is
 * not ready, answers POST /session and the relay upgrade with 503 and Retry-After, and once it sees
 * a majority again it reads the deny list, including what was denied while it was cut off, before
 * it serves again.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DenyListReadTest {
  private static final Map<String, Object> SETTINGS =
      Map.of(
          "pekko.remote.artery.advanced.test-mode", "on",
          "pekko.cluster.failure-detector.acceptable-heartbeat-pause", "3s",
          // nobody is downed while the test cuts and heals the network
          "pekko.cluster.split-brain-resolver.stable-after", "120s",
          "relay.code-ttl", "2m");
  private static final String TOPIC = "read/deny";

  private final TestNode cutOff = TestNode.start(SETTINGS);
  private final TestNode b = TestNode.joining(cutOff, SETTINGS);
  private final TestNode c = TestNode.joining(cutOff, SETTINGS);

  @AfterAll
  void stopCluster() {
    for (TestNode node : List.of(c, b, cutOff)) {
      node.close();
    }
  }

  private static String token(String bookingId) {
    return Tokens.sign(Tokens.session(TOPIC, List.of("read", "write"), bookingId).build());
  }

  @Test
  void aNodeThatCannotReadAMajorityIssuesNoCodesAndAdmitsNoConnectionsUntilItHasReadTheListAgain() throws Exception {
    String admin = Tokens.admin("relay:admin");
    long exp = Instant.now().plusSeconds(3600).getEpochSecond();
    String pending = new AccessClient(cutOff).relayUri(TOPIC, token("kept")).replaceAll(".*code=", "");

    cut(true);
    Await.until("the cut-off node is no longer ready", Duration.ofSeconds(20), () -> cutOff.readyStatus() != 200);
    AccessClient.Answer refused = new AccessClient(cutOff).post("/session/" + TOPIC, token("kept"));
    assertEquals(503, refused.status(), "POST /session on the cut-off node: " + refused.body());
    assertEquals(503, refused.body().get("code").asInt(), "a JSON error");
    assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""), "with Retry-After");
    try (RawWebSocket upgrade = RawWebSocket.connect(cutOff.relay("/session/" + TOPIC + "?code=" + pending).toString())) {
      assertTrue(upgrade.response.startsWith("HTTP/1.1 503"), "the relay upgrade on the cut-off node: " + upgrade.response);
      assertTrue(upgrade.response.contains("Retry-After: 1"), upgrade.response);
    }
    assertTrue(cutOff.metric("relay_deny_list_unread_refusals_total{api=\"session\"}") >= 1, "counted");
    assertEquals(0.0, cutOff.metric("relay_deny_list_read"));

    assertEquals(200, b.readyStatus(), "the majority side stays ready");
    // a deny waits for every reachable member's confirmation: b must see the cut-off node unreachable
    Address cutOffAddress = Cluster.get(cutOff.system).selfMember().address();
    Await.until("b lists the cut-off node unreachable", Duration.ofSeconds(20),
        () -> Cluster.get(b.system).state().getUnreachable().stream().anyMatch(m -> m.address().equals(cutOffAddress)));
    assertEquals(204, new AccessClient(b).post("/bids/deny?bid=denied-while-cut-off&exp=" + exp, admin).status());

    cut(false);
    cutOff.awaitReady(Duration.ofSeconds(30));
    AccessClient.Answer denied = new AccessClient(cutOff).post("/session/" + TOPIC, token("denied-while-cut-off"));
    assertEquals(400, denied.status(), "back in sight of a majority, the node knows what was denied meanwhile: " + denied.body());
    String fetchedBeforeTheCut = cutOff.relay("/session/" + TOPIC + "?code=" + pending).toString();
    assertDoesNotThrow(
        () -> Participant.connect(fetchedBeforeTheCut).close(), "the code fetched before the cut was not used up by the refusal");
  }

  /** Cuts (or heals) the network between the cut-off node and both others, in both directions. */
  private void cut(boolean cut) throws Exception {
    RemoteActorRefProvider provider =
        (RemoteActorRefProvider) ((ExtendedActorSystem) Adapter.toClassic(cutOff.system)).provider();
    ThrottlerTransportAdapter.ThrottleMode mode =
        cut ? ThrottlerTransportAdapter.blackholeThrottleMode() : ThrottlerTransportAdapter.unthrottledThrottleMode();
    for (TestNode other : List.of(b, c)) {
      scala.concurrent.Await.result(
          provider
              .transport()
              .managementCommand(
                  new ThrottlerTransportAdapter.SetThrottle(
                      AddressFromURIString.parse(other.address()), ThrottlerTransportAdapter.bothDirection(), mode)),
          scala.concurrent.duration.Duration.create(5, TimeUnit.SECONDS));
    }
  }
}
