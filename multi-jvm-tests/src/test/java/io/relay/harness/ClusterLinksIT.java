package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.ClusterPki;
import io.relay.testing.Tokens;
import java.io.IOException;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The cluster links over mutual TLS, with node JVMs: a node without the cluster's certificate
 * (another CA's, the cluster CA's under another name, or plain TCP) never becomes a member and
 * redeems none of the cluster's codes; a certificate renewed on disk is served without a restart
 * and a new node joins after it.
 */
class ClusterLinksIT {
  private static final Duration JOIN_ATTEMPTS = Duration.ofSeconds(60);
  /** What a node logs once two rounds of asking its seed nodes to let it join went unanswered. */
  private static final String JOIN_FAILED = "Couldn't join seed nodes after [2] attempts";
  private static final String RELAY_URL = "ws://127.0.0.1:1";
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void nodesWithoutTheClustersCertificateNeverJoinAndRedeemNoCode() throws Exception {
    try (RelayCluster cluster = new RelayCluster(config, RELAY_URL, Map.of()).start(2)) {
      List<NodeProcess> members = cluster.running();
      Path work = Files.createTempDirectory(config.workDir(), "outsiders-");
      ClusterPki otherCa = ClusterPki.create(work.resolve("other-ca"), "another-ca");
      Path otherCaCert = otherCa.issue(work.resolve("other-ca-node"), ClusterPki.CLUSTER_NAME);
      Path otherName = cluster.pki().issue(work.resolve("other-name-node"), "another-cluster");
      List<NodeProcess> outsiders =
          List.of(
              cluster.launchOutsider("other-ca", Map.of("RELAY_CLUSTER_TLS_DIR", otherCaCert.toString())),
              cluster.launchOutsider("other-name", Map.of("RELAY_CLUSTER_TLS_DIR", otherName.toString())),
              cluster.launchOutsider("plain-tcp", Map.of("RELAY_CLUSTER_TLS_DIR", "", "RELAY_CLUSTER_TRANSPORT", "tcp")));
      for (NodeProcess outsider : outsiders) {
        Await.until(outsider.name + " reports that its seed nodes did not let it join", JOIN_ATTEMPTS,
            () -> log(outsider).contains(JOIN_FAILED), () -> outsider.name + " log:\n" + tail(outsider));
      }

      Set<String> cluster2 = Set.of(members.get(0).address(), members.get(1).address());
      for (NodeProcess member : members) {
        assertEquals(
            Map.of(members.get(0).address(), "Up", members.get(1).address(), "Up"), member.members(),
            member.name + " lists the two members and none of the outsiders");
      }
      for (NodeProcess outsider : outsiders) {
        assertTrue(
            outsider.members().keySet().stream().noneMatch(cluster2::contains) && !outsider.members().containsValue("Up"),
            outsider.name + " knows no member of the cluster and is itself not Up: " + outsider.members());
        assertFalse(outsider.isReady(), outsider.name + " is not ready");
      }

      String topic = "links/outsiders";
      String code = code(members.get(0), topic);
      for (NodeProcess outsider : outsiders) {
        int status = upgrade(outsider, topic, code);
        assertEquals(503, status, outsider.name + " redeems no code issued on the cluster: it answers 503, as a node cut off from the cluster does");
      }
      assertEquals(101, upgrade(members.get(1), topic, code), "the code the outsiders were shown still opens on a member");
      assertTrue(
          outsiders.stream().allMatch(o -> o.metric("relay_connections_opened_total") == 0 && o.metric("relay_claims_total") == 0),
          "no outsider opened a connection or claimed a topic");
      LogHygiene.assertClean(cluster.logs());
    }
  }

  @Test
  void aCertificateRenewedOnDiskIsServedWithoutARestartAndANewNodeJoinsAfterIt() throws Exception {
    Map<String, String> quickReload = Map.of("RELAY_SECRET_RELOAD_INTERVAL", "1s");
    try (RelayCluster cluster = new RelayCluster(config, RELAY_URL, quickReload).start(1)) {
      NodeProcess first = cluster.running().get(0);
      Path probe = cluster.pki().issue(cluster.pki().dir().resolve("probe"), ClusterPki.CLUSTER_NAME);
      Path dir = cluster.tlsDir(first);
      String issued = ClusterPki.certificate(dir).getSerialNumber().toString(16);
      assertEquals(issued, presented(cluster, first, probe), "the node serves the certificate it started with");

      cluster.pki().issue(dir, ClusterPki.CLUSTER_NAME);
      String renewed = ClusterPki.certificate(dir).getSerialNumber().toString(16);
      assertNotEquals(issued, renewed);
      Await.until(first.name + " serves its renewed certificate (serial " + renewed + ") on its remoting port", Duration.ofSeconds(30),
          () -> renewed.equals(presented(cluster, first, probe)));

      long pid = first.process().pid();
      NodeProcess second = cluster.scaleUp();
      Await.until(first.name + " lists " + second.name + " as Up", Duration.ofSeconds(30),
          () -> "Up".equals(first.members().get(second.address())));
      assertEquals(Map.of(first.address(), "Up", second.address(), "Up"), second.members(), second.name + " joined the renewed node's cluster");
      assertTrue(first.process().isAlive() && first.process().pid() == pid, "the renewed node was not restarted");
      LogHygiene.assertClean(cluster.logs());
    }
  }

  private static String presented(RelayCluster cluster, NodeProcess node, Path probe) {
    try {
      return cluster.pki().presentedAt(node.remotePort, probe).getSerialNumber().toString(16);
    } catch (IOException | java.security.GeneralSecurityException e) {
      return "no certificate: " + e;
    }
  }

  private String code(NodeProcess node, String topic) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.accessPort + "/session/" + topic))
                .header("Authorization", Tokens.booked(topic, "booking-links", "read", "write"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), response.body());
    return response.body().replaceAll(".*code=([A-Za-z0-9_-]+).*", "$1");
  }

  /** The status a WebSocket upgrade with {@code code} gets: 101 when it opens. */
  private int upgrade(NodeProcess node, String topic, String code) throws Exception {
    try {
      WebSocket socket =
          http.newWebSocketBuilder()
              .buildAsync(URI.create("ws://127.0.0.1:" + node.relayPort + "/session/" + topic + "?code=" + code), new WebSocket.Listener() {})
              .get(15, TimeUnit.SECONDS);
      socket.abort();
      return 101;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException refused) {
        return refused.getResponse().statusCode();
      }
      return -1; // no answer at all: not redeemed either
    }
  }

  private static String log(NodeProcess node) {
    try {
      return Files.readString(node.process().log(), StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return "";
    }
  }

  private static String tail(NodeProcess node) {
    String log = log(node);
    return log.substring(Math.max(0, log.length() - 4000));
  }
}
