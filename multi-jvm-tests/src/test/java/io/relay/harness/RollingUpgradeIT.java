package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.testing.Await;
import io.relay.testing.ClusterPki;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A rolling upgrade under traffic from the previous release ({@link PinnedRelease#PREVIOUS}, 0.2.0)
 * to the current build, on plain TCP cluster links (0.2.0 has no TLS links). Three nodes of the
 * release behind nginx; a deny is taken on one of them; then each old node in turn is replaced in
 * the shipped Deployment's order ({@code maxSurge: 1}, {@code maxUnavailable: 0}): a node of the
 * current build joins and turns ready, the proxy adds it, the old node gets SIGTERM, the proxy drops
 * it once unready, it drains and exits, and the traffic settles (every topic on one node with all
 * its participants, every reader 10 more frames) before the next step. While both builds are
 * members, a code issued by an old node opens on a new one and the other way round, and a deny taken
 * on a new node answers 204 without waiting for the old ones, which refuse the booking once
 * replication brings it. At the end the
 * deny taken on the old nodes still holds on the new ones, every member is of the current build,
 * and a node of the current build on TLS links does not join the upgraded cluster.
 *
 * <p>So the links then move to TLS as deploy/README.md ("From 0.2.0") tells an operator to: a
 * second cluster of the current build on TLS links is stood up beside the first, the bookings the
 * first lists as denied are denied on it, the proxy is pointed at it, and the first cluster's nodes
 * get SIGTERM and drain. Every client ends on the new cluster, a code of the old cluster is refused
 * there (401), the denies hold there, and nothing was lost, duplicated or reordered outside
 * reconnect windows, throughout both moves.
 */
class RollingUpgradeIT {
  /** The booking denied on a node of the release before the upgrade. */
  private static final String DENIED = "booking-denied-before-the-upgrade";
  /** The booking denied on a node of the current build while nodes of the release are members. */
  private static final String DENIED_MIXED = "booking-denied-while-mixed";
  private static final Duration ANSWER = Duration.ofSeconds(10);
  private static final Duration STEP = Duration.ofSeconds(60);
  private static final int FRAMES_PER_STEP = 10;
  private static final Duration JOIN_ATTEMPTS = Duration.ofSeconds(60);
  /** What a node logs once two rounds of asking its seed nodes to let it join went unanswered. */
  private static final String JOIN_FAILED = "Couldn't join seed nodes after [2] attempts";
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  /** The cluster on TLS links stood up beside the upgraded one. */
  private RelayCluster beside;

  @AfterEach
  void stopTheClusterBeside() {
    if (beside != null) {
      beside.close();
    }
  }

  @Test
  void everyNodeIsReplacedByTheCurrentBuildUnderTrafficAndWhatTheReleaseHeldStillHolds() {
    TrafficScenario template = new TrafficScenario("rolling-upgrade-from-" + PinnedRelease.PREVIOUS.version() + "-3", "nginx");
    Scenario scenario = template.scenario();
    long building = System.nanoTime();
    String unavailable = PinnedRelease.PREVIOUS.unavailable(template.config());
    Assumptions.assumeTrue(unavailable == null, unavailable);
    NodeBuild previous = PinnedRelease.PREVIOUS.build(template.config());
    scenario.put("previous_release", PinnedRelease.PREVIOUS.version() + " (" + PinnedRelease.PREVIOUS.commit() + ")");
    scenario.put("previous_release_jar_ready_ms", (System.nanoTime() - building) / 1_000_000);
    NodeBuild current = NodeBuild.current(template.config());
    NodeCommand.java(template.config()); // the current build's class-data archive is made before the steps are timed
    template.plainLinks(previous).nodes(3, Map.of("RELAY_DRAIN_DELAY", "2s")).topics("upgrade", 30, 1).run(run -> {
      RelayCluster cluster = run.cluster();
      List<NodeProcess> originals = cluster.running();
      assertEquals(204, deny(originals.get(0)).statusCode(), "a deny on a node of " + previous.name());
      long event = System.nanoTime();
      List<Long> steps = new ArrayList<>();
      for (NodeProcess old : originals) {
        long step = System.nanoTime();
        NodeProcess replacement = cluster.scaleUp(current);
        run.proxy().reload(cluster.running());
        run.scenario().counters(List.of(old));
        cluster.terminate(old);
        Await.until(old + " (" + previous.name() + ") turns unready after SIGTERM", ANSWER, () -> !old.isReady());
        run.proxy().reload(cluster.running());
        old.process().awaitExit(Duration.ofSeconds(30));
        Set<String> members = cluster.running().stream().map(NodeProcess::address).collect(Collectors.toSet());
        for (NodeProcess node : cluster.running()) {
          Await.until(node + " sees exactly the running nodes as members, all Up, after " + old + " left", STEP,
              () -> node.members().keySet().equals(members) && node.members().values().stream().allMatch("Up"::equals),
              () -> "members: " + node.members());
        }
        Await.until("every topic is on exactly one node with all its participants after " + old + " was replaced", STEP,
            () -> ClusterView.status(run.proxy().accessUrl()).converged(ScenarioAssertions.expected(run.traffic())));
        run.traffic().awaitFrames("after " + old + " was replaced", FRAMES_PER_STEP, STEP);
        steps.add((System.nanoTime() - step) / 1_000_000);
        if (steps.size() == 1) {
          NodeProcess stillOld = cluster.running().get(0);
          codesCrossBuilds(stillOld, replacement, previous, current);
          denyWhileMixed(run.scenario(), stillOld, replacement, previous);
        }
      }
      run.scenario().put("step_ms", steps);
      run.awaitConverged("every topic is on exactly one node of the current build with all its participants", event);
      List<NodeProcess> upgraded = cluster.running();
      for (NodeProcess node : upgraded) {
        assertEquals(current, cluster.buildOf(node), node + " was started from the current build");
      }
      holdsTheDenies(upgraded, "the upgraded cluster", true);
      aNodeOnTlsLinksDoesNotJoin(cluster);
      moveLinksToTls(run, template.config());
    }, run -> {
      run.scenario().counters(beside.running());
      holdsTheDenies(beside.running(), "the cluster on TLS links", false);
      assertTrue(run.traffic().allConnected(), "everyone is connected at the end");
      LogHygiene.assertClean(beside.logs());
    });
  }

  /**
   * Each of {@code nodes} lists exactly {@code nodes} as members, all of the current build (role
   * {@code deny-confirms}, which 0.2.0 lacks), lists the booking denied on 0.2.0, and refuses a code
   * for it (400).
   */
  private void holdsTheDenies(List<NodeProcess> nodes, String which, boolean deniedMixedToo) {
    Set<String> addresses = nodes.stream().map(NodeProcess::address).collect(Collectors.toSet());
    for (NodeProcess node : nodes) {
      Map<String, Set<String>> roles = node.memberRoles();
      assertEquals(addresses, roles.keySet(), node + " lists exactly the nodes of " + which + " as members");
      assertTrue(roles.values().stream().allMatch(r -> r.contains("deny-confirms")), node + " lists only members of the current build: " + roles);
      Set<String> listed = denied(node);
      assertTrue(listed.contains(DENIED), node + " lists the booking denied on 0.2.0: " + listed);
      assertTrue(!deniedMixedToo || listed.contains(DENIED_MIXED), node + " lists the booking denied while the builds were mixed: " + listed);
      HttpResponse<String> code = send(node, "POST", "/session/upgrade-denied/topic", Tokens.booked("upgrade-denied/topic", DENIED, "read", "write"));
      assertEquals(400, code.statusCode(), node + " refuses a code for the booking denied on 0.2.0: " + code.body());
    }
  }

  /** The bookings {@code GET /bids/deny} at {@code node} lists. */
  private Set<String> denied(NodeProcess node) {
    HttpResponse<String> listed = send(node, "GET", "/bids/deny", Tokens.admin("relay:admin"));
    assertEquals(200, listed.statusCode(), listed.body());
    try {
      Set<String> ids = new java.util.TreeSet<>();
      JSON.readTree(listed.body()).path("booking_ids").forEach(id -> ids.add(id.asText()));
      return ids;
    } catch (IOException e) {
      throw new AssertionError(node + " listed its denies in a body that is not JSON: " + listed.body(), e);
    }
  }

  /**
   * deploy/README.md's way from plain links to TLS links, under traffic: a cluster on TLS links
   * beside, the old cluster's denies taken on it, the proxy pointed at it, the old nodes drained.
   */
  private void moveLinksToTls(TrafficScenario.Run run, HarnessConfig config) {
    long move = System.nanoTime();
    List<NodeProcess> old = run.cluster().running();
    String topic = "upgrade-codes/old-cluster";
    String oldCode = code(old.get(0), topic, Tokens.booked(topic, "booking-old-cluster-code", "read", "write"));
    beside = new RelayCluster(config, run.proxy().relayUrl(), Map.of("RELAY_DRAIN_DELAY", "2s")).start(3);
    Set<String> copied = denied(old.get(0));
    long exp = Instant.now().plusSeconds(600).getEpochSecond();
    for (String booking : copied) {
      HttpResponse<String> denied = send(beside.running().get(0), "POST", "/bids/deny?bid=" + booking + "&exp=" + exp, Tokens.admin("relay:admin"));
      assertEquals(204, denied.statusCode(), "the deny of " + booking + " taken again on the cluster on TLS links: " + denied.body());
    }
    run.proxy().reload(beside.running());
    run.scenario().counters(old);
    old.forEach(run.cluster()::terminate);
    old.forEach(node -> node.process().awaitExit(Duration.ofSeconds(30)));
    Await.until("every topic is on exactly one node of the cluster on TLS links with all its participants", STEP,
        () -> ClusterView.status(run.proxy().accessUrl()).converged(ScenarioAssertions.expected(run.traffic())));
    run.scenario().put("move_to_tls_links_ms", (System.nanoTime() - move) / 1_000_000);
    assertEquals(401, upgrade(beside.running().get(0), topic, oldCode), "a code issued by the old cluster is refused by the cluster on TLS links");
  }

  /**
   * Why the links move to TLS by a cluster stood up beside, not by a rolling restart: a node of the
   * current build on TLS links, with a certificate of a CA, never joins the upgraded cluster on
   * plain links.
   */
  private void aNodeOnTlsLinksDoesNotJoin(RelayCluster cluster) {
    Path tls;
    try {
      tls = cluster.pki().issue(cluster.pki().dir().resolve("tls-links"), ClusterPki.CLUSTER_NAME);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    try (NodeProcess outsider = cluster.launchOutsider("tls-links", Map.of("RELAY_CLUSTER_TRANSPORT", "", "RELAY_CLUSTER_TLS_DIR", tls.toString()))) {
      Await.until(outsider.name + " (TLS links) reports that the members on plain links did not let it join", JOIN_ATTEMPTS,
          () -> log(outsider).contains(JOIN_FAILED), () -> outsider.process().startFailure());
      for (NodeProcess member : cluster.running()) {
        assertFalse(member.members().containsKey(outsider.address()), member + " does not list the node on TLS links: " + member.members());
      }
      assertFalse(outsider.isReady(), "the node on TLS links is not ready");
    }
  }

  private static String log(NodeProcess node) {
    try {
      return Files.readString(node.process().log(), StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return "";
    }
  }

  /** A code issued by a node of one build opens a connection at a node of the other, both ways. */
  private void codesCrossBuilds(NodeProcess old, NodeProcess fresh, NodeBuild previous, NodeBuild current) {
    String topic = "upgrade-codes/topic";
    String token = Tokens.booked(topic, "booking-codes-across-builds", "read", "write");
    assertEquals(101, upgrade(fresh, topic, code(old, topic, token)), "a code issued by " + old + " (" + previous.name() + ") opens at " + fresh + " (" + current.name() + ")");
    assertEquals(101, upgrade(old, topic, code(fresh, topic, token)), "a code issued by " + fresh + " (" + current.name() + ") opens at " + old + " (" + previous.name() + ")");
  }

  /**
   * A deny taken on a node of the current build while nodes of the release are members answers 204
   * without waiting for them (they confirm nothing: no {@code deny-confirms} role; a deny that waited
   * for them would answer 503 at the confirmation timeout); a node of the release refuses the booking
   * once replication brings it.
   */
  private void denyWhileMixed(Scenario scenario, NodeProcess old, NodeProcess fresh, NodeBuild previous) {
    long asked = System.nanoTime();
    HttpResponse<String> denied = deny(fresh, DENIED_MIXED);
    long answeredMs = (System.nanoTime() - asked) / 1_000_000;
    // a deny that waited for a member's confirmation and did not get it would answer 503
    assertEquals(204, denied.statusCode(), "a deny on " + fresh + " with members of " + previous.name() + " does not wait for them: " + denied.body());
    String token = Tokens.booked("upgrade-denied/mixed", DENIED_MIXED, "read", "write");
    long refusedMs = Await.until(old + " (" + previous.name() + ") refuses a code for the booking denied on " + fresh, ANSWER,
        () -> send(old, "POST", "/session/upgrade-denied/mixed", token).statusCode() == 400);
    scenario.put("mixed_deny_answered_ms", answeredMs);
    scenario.put("mixed_deny_refused_by_old_node_after_ms", refusedMs);
  }

  private HttpResponse<String> deny(NodeProcess node) {
    return deny(node, DENIED);
  }

  private HttpResponse<String> deny(NodeProcess node, String booking) {
    long exp = Instant.now().plusSeconds(600).getEpochSecond();
    return send(node, "POST", "/bids/deny?bid=" + booking + "&exp=" + exp, Tokens.admin("relay:admin"));
  }

  private String code(NodeProcess node, String topic, String token) {
    HttpResponse<String> response = send(node, "POST", "/session/" + topic, token);
    assertEquals(200, response.statusCode(), node + " issues a code: " + response.body());
    return response.body().replaceAll(".*code=([A-Za-z0-9_-]+).*", "$1");
  }

  /** The status a WebSocket upgrade with {@code code} at {@code node} gets: 101 when it opens. */
  private int upgrade(NodeProcess node, String topic, String code) {
    try {
      WebSocket socket =
          http.newWebSocketBuilder()
              .buildAsync(URI.create("ws://127.0.0.1:" + node.relayPort + "/session/" + topic + "?code=" + code), new WebSocket.Listener() {})
              .get(ANSWER.toSeconds(), TimeUnit.SECONDS);
      socket.abort();
      return 101;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException refused) {
        return refused.getResponse().statusCode();
      }
      throw new AssertionError("the upgrade at " + node + " got no answer", e);
    } catch (Exception e) {
      throw new AssertionError("the upgrade at " + node + " did not complete within " + ANSWER, e);
    }
  }

  private HttpResponse<String> send(NodeProcess node, String method, String path, String authorization) {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.accessPort + path))
              .timeout(ANSWER)
              .header("Authorization", authorization)
              .method(method, HttpRequest.BodyPublishers.noBody())
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new AssertionError(method + " " + path.replaceAll("\\?.*", "") + " to " + node + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
