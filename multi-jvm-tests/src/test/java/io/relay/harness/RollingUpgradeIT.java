package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * nothing was lost, duplicated or reordered outside reconnect windows, and a node of the current
 * build on TLS links does not join the upgraded cluster (so the links move to TLS otherwise than by
 * a rolling restart).
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
  private final HttpClient http = HttpClient.newHttpClient();

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
        cluster.terminate(old);
        Await.until(old + " (" + previous.name() + ") turns unready after SIGTERM", ANSWER, () -> !old.isReady());
        run.proxy().reload(cluster.running());
        old.process().awaitExit(Duration.ofSeconds(30));
        Set<String> members = cluster.running().stream().map(NodeProcess::address).collect(Collectors.toSet());
        Await.until(replacement + " sees exactly the running nodes as members, all Up", STEP,
            () -> replacement.members().keySet().equals(members) && replacement.members().values().stream().allMatch("Up"::equals),
            () -> "members: " + replacement.members());
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
    }, run -> {
      List<NodeProcess> nodes = run.cluster().running();
      Set<String> addresses = nodes.stream().map(NodeProcess::address).collect(Collectors.toSet());
      for (NodeProcess node : nodes) {
        assertEquals(current, run.cluster().buildOf(node), node + " was started from the current build");
        Map<String, Set<String>> roles = node.memberRoles();
        assertEquals(addresses, roles.keySet(), node + " lists exactly the nodes of the current build as members");
        assertTrue(roles.values().stream().allMatch(r -> r.contains("deny-confirms")),
            node + " lists only members of the current build (role deny-confirms, which " + previous.name() + " lacks): " + roles);
        HttpResponse<String> listed = send(node, "GET", "/bids/deny", Tokens.admin("relay:admin"));
        assertEquals(200, listed.statusCode(), listed.body());
        assertTrue(listed.body().contains("\"" + DENIED + "\""), node + " lists the booking denied on " + previous.name() + ": " + listed.body());
        HttpResponse<String> code = send(node, "POST", "/session/upgrade-denied/topic", Tokens.booked("upgrade-denied/topic", DENIED, "read", "write"));
        assertEquals(400, code.statusCode(), node + " refuses a code for the booking denied on " + previous.name() + ": " + code.body());
      }
      assertTrue(run.traffic().allConnected(), "everyone is connected at the end");
      aNodeOnTlsLinksDoesNotJoin(run.cluster());
    });
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
