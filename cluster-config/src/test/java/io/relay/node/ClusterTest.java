package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.StreamSupport;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What clients see of a three-node cluster (three actor systems in this JVM on loopback): codes
 * that work on any node, cancellations on every node, topic claims, hold-down, and cluster-wide
 * status. Clients connect to a chosen node directly, as a proxy would send them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterTest {
  private static final Duration DIGEST = Duration.ofSeconds(1);
  private static final Duration HOLD_DOWN = Duration.ofSeconds(2);
  private static final Duration STATS_EVERY = Duration.ofSeconds(3);
  /** How long a client waits for what the cluster does at once (a close, an answer): a deadline, not a measure. */
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Map<String, Object> TIMINGS =
      Map.of(
          "relay.claims.digest-interval", DIGEST.toMillis() + "ms",
          "relay.claims.hold-down", HOLD_DOWN.toMillis() + "ms",
          "relay.stats-every", STATS_EVERY.toMillis() + "ms");

  private TestNode a;
  private TestNode b;
  private TestNode c;
  private final List<Participant> open = new ArrayList<>();

  @BeforeAll
  void startCluster() {
    a = TestNode.start(TIMINGS);
    // b publishes the stats topic's reports on its schedule only once an hour: what its
    // participants receive is what they asked for
    Map<String, Object> hourlyStats = new java.util.HashMap<>(TIMINGS);
    hourlyStats.put("relay.stats-every", "1h");
    b = TestNode.joining(a, hourlyStats);
    Map<String, Object> silent = new java.util.HashMap<>(TIMINGS);
    silent.put("relay.claims.announce", "off");
    c = TestNode.joining(a, silent); // c never announces claims: only its digest tells others
    for (TestNode node : List.of(a, b, c)) {
      open.add(join(node, "probe/" + node.remotePort, "read"));
    }
    Await.until(
        "GET /status on a lists connections of all three nodes",
        Duration.ofSeconds(20),
        () -> nodesInStatus(a).size() == 3);
  }

  @AfterAll
  void stopCluster() {
    open.forEach(Participant::close);
    for (TestNode node : List.of(c, b, a)) {
      node.close();
    }
  }

  private static String uri(TestNode node, String topic, String bookingId, String... scopes) {
    String token = Tokens.sign(Tokens.session(topic, List.of(scopes), bookingId).build());
    return new AccessClient(node).relayUri(topic, token);
  }

  /** Gets a code from {@code node}'s access API and connects to {@code node}'s relay port. */
  private static Participant join(TestNode node, String topic, String... scopes) {
    return Participant.connect(uri(node, topic, "booking-1", scopes));
  }

  private static Set<String> nodesInStatus(TestNode node) {
    AccessClient.Answer answer = new AccessClient(node).get("/status", Tokens.admin("relay:stats"));
    Set<String> nodes = new HashSet<>();
    answer.body().forEach(report -> nodes.add(report.get("node").asText()));
    return nodes;
  }

  @Test
  void aCodeIssuedOnOneNodeIsRedeemedOnAnother() {
    String token = Tokens.session("cluster/code", "read", "write");
    String fromA = new AccessClient(a).relayUri("cluster/code", token);
    String onB = fromA.replace(":" + a.relayPort + "/", ":" + b.relayPort + "/");
    assertDoesNotThrow(() -> Participant.connect(onB).close(), "b admits the code a issued");
  }

  @Test
  void aCodeIsNeverAcceptedTwiceEvenWhenTwoNodesAreOfferedItAtOnce() throws Exception {
    String token = Tokens.session("cluster/race", "read", "write");
    int decided = 0;
    for (int round = 0; round < 20; round++) {
      String code = new AccessClient(a).relayUri("cluster/race", token).replaceAll(".*code=", "");
      List<CompletableFuture<Integer>> attempts = new ArrayList<>();
      // two other nodes race, or the issuing node races another
      for (TestNode node : round % 2 == 0 ? List.of(b, c) : List.of(a, b)) {
        attempts.add(
            CompletableFuture.supplyAsync(
                () -> {
                  try (Participant p = Participant.connect(node.relay("/session/cluster/race?code=" + code).toString())) {
                    return 101;
                  } catch (Participant.Refused refused) {
                    return refused.status;
                  }
                }));
      }
      List<Integer> statuses = new ArrayList<>();
      for (CompletableFuture<Integer> attempt : attempts) {
        statuses.add(Await.value("an attempt is answered", Duration.ofSeconds(20), attempt));
      }
      statuses.sort(null);
      // the issuer grants the first claim only; 503 only if it did not answer in time
      assertTrue(
          statuses.equals(List.of(101, 401)) || statuses.contains(503),
          "round " + round + ": the two redemptions were answered " + statuses + ", not one accepted and one refused");
      if (statuses.equals(List.of(101, 401))) {
        decided++;
      }
    }
    assertTrue(decided > 0, "in no round was one redemption accepted and the other refused (every round had a 503)");
  }

  @Test
  void aCodeWhoseIssuingNodeHasLeftIsRefusedSoTheClientFetchesANewOne() {
    String token = Tokens.session("cluster/issuer-gone", "read", "write");
    String issued;
    String address;
    try (TestNode issuer = TestNode.joining(a, TIMINGS)) {
      issued = new AccessClient(issuer).relayUri("cluster/issuer-gone", token);
      address = Cluster.get(issuer.system).selfMember().address().toString();
      issued = issued.replace(":" + issuer.relayPort + "/", ":" + b.relayPort + "/");
    }
    Await.until(
        "b sees the issuing node leave",
        Duration.ofSeconds(30),
        () -> StreamSupport.stream(Cluster.get(b.system).state().getMembers().spliterator(), false)
            .noneMatch(m -> m.address().toString().equals(address)));
    String onB = issued;
    Participant.Refused refused = assertThrows(Participant.Refused.class, () -> Participant.connect(onB).close());
    assertEquals(401, refused.status, "a code nobody can confirm any more is refused like a used one");
    String fresh = new AccessClient(b).relayUri("cluster/issuer-gone", token);
    assertDoesNotThrow(() -> Participant.connect(fresh).close(), "a new code works");
  }

  @Test
  void aDenyOnOneNodeClosesTheBookingOnEveryNode() {
    try (Participant onB = Participant.connect(uri(b, "cluster/deny-b", "cancelled", "read", "write"));
        Participant onC = Participant.connect(uri(c, "cluster/deny-c", "cancelled", "read", "write"));
        Participant other = Participant.connect(uri(c, "cluster/deny-c", "kept", "read", "write"))) {
      long exp = Instant.now().plusSeconds(600).getEpochSecond();
      AccessClient.Answer denied = new AccessClient(a).post("/bids/deny?bid=cancelled&exp=" + exp, Tokens.admin("relay:admin"));
      assertEquals(204, denied.status());
      assertEquals(4003, onB.awaitClose(WAIT), "closed on b");
      assertEquals(4003, onC.awaitClose(WAIT), "closed on c");
      try (Participant reader = Participant.connect(uri(c, "cluster/deny-c", "kept-too", "read"))) {
        other.sendText("after the deny");
        assertEquals("after the deny", reader.next(WAIT).asText(), "another booking on the same topic still relays");
      }
      assertFalse(other.isClosed(), "and stays");
    }
  }

  @Test
  void theDenyListSurvivesWhenANodeIsReplaced() {
    long exp = Instant.now().plusSeconds(600).getEpochSecond();
    String admin = Tokens.admin("relay:admin");
    assertEquals(204, new AccessClient(b).post("/bids/deny?bid=survivor&exp=" + exp, admin).status());
    String pending = uri(a, "cluster/survivor", "survivor-ok", "read");
    try (TestNode replacement = TestNode.joining(a, TIMINGS)) {
      AccessClient.Answer listed = new AccessClient(replacement).get("/bids/deny", admin);
      assertTrue(listed.body().get("booking_ids").toString().contains("survivor"), "a node that joins later has the deny list: " + listed.body());
      String token = Tokens.sign(Tokens.session("cluster/survivor", List.of("read"), "survivor").build());
      assertEquals(400, new AccessClient(replacement).post("/session/cluster/survivor", token).status(), "it refuses the denied booking");
      String onReplacement = pending.replace(":" + a.relayPort + "/", ":" + replacement.relayPort + "/");
      assertDoesNotThrow(() -> Participant.connect(onReplacement).close(), "other bookings' codes still work on it");
    }
  }

  @Test
  void whenTwoNodesTakeATopicAtOnceExactlyOneKeepsIt() throws Exception {
    String topic = "cluster/contested";
    String onA = uri(a, topic, "booking-1", "read", "write");
    String onB = uri(b, topic, "booking-1", "read", "write");
    CompletableFuture<Participant> first = CompletableFuture.supplyAsync(() -> Participant.connect(onA));
    CompletableFuture<Participant> second = CompletableFuture.supplyAsync(() -> Participant.connect(onB));
    try (Participant pa = Await.value("the participant on a connects", Duration.ofSeconds(20), first);
        Participant pb = Await.value("the participant on b connects", Duration.ofSeconds(20), second)) {
      Await.until("one of the two participants is moved", Duration.ofSeconds(5), () -> pa.isClosed() || pb.isClosed());
      Participant moved = pa.isClosed() ? pa : pb;
      Participant kept = pa.isClosed() ? pb : pa;
      TestNode winner = pa.isClosed() ? b : a;
      assertEquals(4001, moved.awaitClose(WAIT), "the losing node closes with 4001");
      try (Participant again = join(winner, topic, "read", "write")) {
        again.sendText("on the winner");
        assertEquals("on the winner", kept.next().asText(), "the kept participant still relays");
      }
      assertFalse(kept.isClosed(), "the winner keeps its connection");
    }
  }

  @Test
  void aLostAnnouncementIsRepairedByTheDigest() {
    String topic = "cluster/silent";
    try (Participant onA = join(a, topic, "read", "write")) {
      try (Participant onC = join(c, topic, "read", "write")) {
        assertEquals(4001, onA.awaitClose(WAIT), "a gives the topic up after c's digest");
        assertFalse(onC.isClosed(), "c keeps the topic");
      }
    }
  }

  @Test
  void anEvictedTopicIsHeldDownThenAcceptedAgain() {
    String topic = "cluster/holddown";
    try (Participant onA = join(a, topic, "read", "write");
        Participant onB = join(b, topic, "read", "write")) {
      assertEquals(4001, onA.awaitClose(Duration.ofSeconds(5)), "a gave the topic to b");
      long evicted = System.nanoTime();
      Participant.Refused refused =
          org.junit.jupiter.api.Assertions.assertThrows(Participant.Refused.class, () -> join(a, topic, "read", "write"));
      assertEquals(503, refused.status, "a refuses the topic during hold-down");
      Participant[] back = new Participant[1];
      Await.until(
          "a accepts the topic again after its hold-down",
          HOLD_DOWN.plusSeconds(5),
          () -> {
            try {
              back[0] = join(a, topic, "read", "write");
              return true;
            } catch (Participant.Refused stillHeld) {
              return false;
            }
          });
      long heldMillis = (System.nanoTime() - evicted) / 1_000_000;
      back[0].close();
      assertTrue(heldMillis >= HOLD_DOWN.toMillis() - 200, "held down for " + heldMillis + " ms");
    }
  }

  @Test
  void metricsCountClaimsEvictionsAndTraffic() {
    double evictions = a.metric("relay_evictions_total");
    double claims = b.metric("relay_claims_total");
    double framesIn = b.metric("relay_frames_in_total");
    double framesOut = b.metric("relay_frames_out_total");
    try (Participant onA = join(a, "cluster/metrics", "read", "write");
        Participant onB = join(b, "cluster/metrics", "read", "write")) {
      assertEquals(4001, onA.awaitClose(Duration.ofSeconds(5)));
      try (Participant second = join(b, "cluster/metrics", "read", "write")) {
        second.sendText("counted");
        onB.next();
      }
    }
    Await.until("a counts its eviction", WAIT, () -> a.metric("relay_evictions_total") >= evictions + 1);
    assertTrue(b.metric("relay_claims_total") >= claims + 1, "b counted its claim");
    assertEquals(framesIn + 1, b.metric("relay_frames_in_total"), "b counted the frame in");
    assertEquals(framesOut + 1, b.metric("relay_frames_out_total"), "b counted the frame out");
    Await.until("a counts exactly three members", WAIT, () -> a.metric("relay_cluster_members") == 3.0, () -> "members: " + a.metric("relay_cluster_members"));
    String names = a.metrics();
    for (String name :
        List.of(
            "relay_connections", "relay_topics", "relay_bytes_in_total", "relay_bytes_out_total",
            "relay_frames_dropped_total", "relay_holddown_refusals_total", "relay_codes_issued_total",
            "relay_codes_refused_total", "relay_denies_total", "relay_flapping_total", "relay_close_timeouts_total",
            "relay_request_timeouts_total", "relay_writes_failed_total", "relay_oversized_bodies_total", "relay_pipeline_overflows_total")) {
      assertTrue(names.contains("# TYPE " + name + " "), name + " is exposed");
    }
  }

  @Test
  void aStatsParticipantReceivesTheWholeClustersReportsOnScheduleAndOnRequest() throws Exception {
    try (Participant stats = join(a, "stats", "read", "write")) {
      JsonNode scheduled = json(stats.next(STATS_EVERY.plus(WAIT)));
      assertTrue(reportsOnNodes(scheduled).containsAll(Set.of(a.address(), b.address(), c.address())), "all nodes' connections: " + scheduled);
      JsonNode report = scheduled.get(0);
      for (String field : List.of("topic", "canRead", "canWrite", "connected", "expiresAt", "remoteAddr", "userAgent", "scopes", "stats", "node")) {
        assertTrue(report.has(field), "practable's camelCase field " + field + ": " + report);
      }
      assertTrue(report.get("stats").get("tx").has("fps"), "tx stats: " + report);
      assertTrue(
          reportsOnNodes(json(stats.next(STATS_EVERY.plus(WAIT)))).containsAll(Set.of(a.address(), b.address(), c.address())),
          "and again on schedule");
    }
    // on b nothing is due for an hour, so a report is the answer to the request
    try (Participant asking = join(b, "stats", "read")) { // read alone, as the contract says
      asking.sendText("{\"cmd\":\"update\"}");
      JsonNode answer = json(asking.next(WAIT));
      assertTrue(reportsOnNodes(answer).containsAll(Set.of(a.address(), b.address(), c.address())), "all nodes' connections: " + answer);
    }
  }

  private static JsonNode json(Participant.Frame frame) throws java.io.IOException {
    assertTrue(frame.text(), "stats arrive as text frames");
    return new com.fasterxml.jackson.databind.ObjectMapper().readTree(frame.data());
  }

  private static Set<String> reportsOnNodes(JsonNode reports) {
    Set<String> nodes = new HashSet<>();
    reports.forEach(r -> nodes.add(r.get("node").asText()));
    return nodes;
  }

  @Test
  void statusOnAnyNodeReportsTheConnectionsOfEveryNode() {
    Set<String> all = Set.of(a.address(), b.address(), c.address());
    for (TestNode node : List.of(a, b, c)) {
      Await.until(
          "GET /status on " + node.address() + " lists connections of all three nodes",
          Duration.ofSeconds(10),
          () -> {
            AccessClient.Answer answer = new AccessClient(node).get("/status", Tokens.admin("relay:stats"));
            Set<String> nodes = new HashSet<>();
            answer.body().forEach(report -> nodes.add(report.get("node").asText()));
            Set<String> missing = new HashSet<>(all);
            missing.removeAll(nodes);
            String header = answer.headers().firstValue("X-Relay-Missing-Nodes").orElse("");
            assertTrue(
                missing.stream().allMatch(header::contains),
                "a node left out of /status must be named in X-Relay-Missing-Nodes: " + missing + " vs '" + header + "'");
            return missing.isEmpty();
          });
    }
    JsonNode report = new AccessClient(b).get("/status", Tokens.admin("relay:stats")).body().get(0);
    for (String field : List.of("topic", "node", "can_read", "can_write", "connected_at", "expires_at", "remote_addr", "user_agent", "scopes", "stats")) {
      assertTrue(report.has(field), "a report has " + field + ": " + report);
    }
    assertEquals("127.0.0.1", report.get("remote_addr").asText(), "the peer's address, from the socket (no X-Forwarded-For)");
  }
}
