package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Codes and cancellations across node JVMs: a code issued through one node is redeemed on another,
 * a node started after a code was issued redeems it, and a deny taken by one node closes the
 * booking's connections on every node.
 */
class CodesAndDenyIT {
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void codesWorkOnEveryNodeAndADenyClosesTheBookingEverywhere() throws Exception {
    Scenario scenario = new Scenario(config, "codes-and-deny", "nginx");
    boolean passed = false;
    try (Proxy proxy = Proxy.nginx(config);
        RelayCluster cluster = new RelayCluster(config, proxy.relayUrl(), Map.of()).start(3);
        Traffic traffic = new Traffic(proxy.accessUrl())) {
      NodeProcess first = cluster.running().get(0);
      NodeProcess second = cluster.running().get(1);
      String token = Tokens.booked("codes/one", "booking-codes", "read", "write");

      String issuedOnFirst = code(first, "codes/one", token);
      assertOpens(second, "codes/one", issuedOnFirst, "a code issued on one node is redeemed on another");

      String issuedBeforeJoin = code(first, "codes/one", token);
      long started = System.nanoTime();
      NodeProcess late = cluster.scaleUp();
      assertOpens(late, "codes/one", issuedBeforeJoin, "a node started after the code was issued redeems it");
      scenario.put("late_node_ready_ms", (System.nanoTime() - started) / 1_000_000);

      proxy.start(cluster.running());
      List<Participant> booked = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        booked.add(traffic.participant("deny/" + i, "deny/" + i, "booking-cancelled", "read", "write").start());
      }
      Await.until("the booked participants are connected", Duration.ofSeconds(30), () -> booked.stream().allMatch(Participant::isConnected));
      ClusterView.Snapshot[] seen = new ClusterView.Snapshot[1];
      Await.until("a /status with every node answering and the 12 topics of the booking", Duration.ofSeconds(30),
          () -> (seen[0] = ClusterView.status(proxy.accessUrl())).missingNodes().isEmpty()
              && seen[0].nodesByTopic().keySet().stream().filter(t -> t.startsWith("deny/")).count() == 12,
          () -> "missing nodes: " + seen[0].missingNodes() + "; topics: " + seen[0].nodesByTopic().keySet());
      Set<String> hosts =
          seen[0].nodesByTopic().entrySet().stream()
              .filter(e -> e.getKey().startsWith("deny/"))
              .flatMap(e -> e.getValue().stream())
              .collect(Collectors.toSet());
      assertTrue(hosts.size() >= 2, "the booking's connections are spread over several nodes: " + hosts);

      long exp = Instant.now().plusSeconds(600).getEpochSecond();
      HttpResponse<String> denied =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + first.accessPort + "/bids/deny?bid=booking-cancelled&exp=" + exp))
                  .header("Authorization", Tokens.admin("relay:admin"))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(204, denied.statusCode(), denied.body());
      long closedWithin =
          Await.until("every connection of the denied booking is closed with 4003 and its client stopped", Duration.ofSeconds(5),
              () -> booked.stream().allMatch(p -> p.closesWith(4003) == 1 && p.isStopped()));
      scenario.put("deny_closed_everywhere_ms", closedWithin);
      scenario.put("deny_nodes", hosts.size());
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.report(passed);
    }
  }

  private String code(NodeProcess node, String topic, String token) throws IOException, InterruptedException {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.accessPort + "/session/" + topic))
                .header("Authorization", token)
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), response.body());
    return response.body().replaceAll(".*code=([A-Za-z0-9_-]+).*", "$1");
  }

  private void assertOpens(NodeProcess node, String topic, String code, String what) throws Exception {
    WebSocket socket =
        http.newWebSocketBuilder()
            .buildAsync(URI.create("ws://127.0.0.1:" + node.relayPort + "/session/" + topic + "?code=" + code), new WebSocket.Listener() {})
            .get(15, TimeUnit.SECONDS);
    assertTrue(!socket.isInputClosed(), what);
    socket.abort();
  }
}
