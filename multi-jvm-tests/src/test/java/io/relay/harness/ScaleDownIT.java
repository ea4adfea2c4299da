package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Scale down from 4 to 3 with SIGTERM under traffic: the leaving node turns unready, the proxy
 * drops it (as an ingress drops an unready endpoint), it closes its clients with 1001 and exits;
 * every one of its clients reconnects to a remaining node.
 */
class ScaleDownIT {
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @Test
  void theLeavingNodesClientsAllReconnectElsewhere() {
    Scenario scenario = new Scenario(config, "scale-down-4-to-3-sigterm", "nginx");
    boolean passed = false;
    try (Proxy proxy = new Proxy.Nginx(config);
        RelayCluster cluster = new RelayCluster(config, proxy.relayUrl(), Map.of("RELAY_DRAIN_DELAY", "2s")).start(4);
        Traffic traffic = new Traffic(proxy.accessUrl())) {
      proxy.start(cluster.running());
      traffic.topics("down", 50, 1).connect(Duration.ofSeconds(60));
      traffic.startSending(Duration.ofMillis(50));
      Await.pause(2000);
      scenario.countersBefore(cluster.running());

      NodeProcess leaving = cluster.running().get(1);
      ClusterView.Snapshot before = ClusterView.status(proxy.accessUrl());
      List<String> itsTopics =
          before.nodesByTopic().entrySet().stream().filter(e -> e.getValue().contains(leaving.address())).map(Map.Entry::getKey).toList();
      long event = System.nanoTime();
      cluster.terminate(leaving);
      long unready = Await.until("the leaving node turns unready", Duration.ofSeconds(10), () -> !leaving.isReady());
      proxy.reload(cluster.running());
      Await.until("every topic is on exactly one remaining node with all its participants", Duration.ofSeconds(60), () -> {
        ClusterView.Snapshot now = ClusterView.status(proxy.accessUrl());
        return now.converged(ScenarioAssertions.expected(traffic))
            && now.nodesByTopic().values().stream().noneMatch(n -> n.contains(leaving.address()));
      });
      scenario.convergence((System.nanoTime() - event) / 1_000_000);
      int exit = leaving.process().awaitExit(Duration.ofSeconds(30));
      long stopped = (System.nanoTime() - event) / 1_000_000;
      Await.pause(2000);
      traffic.stopSending(Duration.ofSeconds(1));
      scenario.countersAfter(cluster.running());
      scenario.put("topics_reclaimed", scenario.claims());

      ClusterView.Snapshot after = ClusterView.status(proxy.accessUrl());
      boolean anyLeft = after.nodesByTopic().values().stream().anyMatch(n -> n.contains(leaving.address()));
      long closedWith1001 =
          traffic.topics().values().stream().flatMap(t -> t.participants().stream()).mapToLong(p -> p.closesWith(1001)).sum();
      scenario.put("unready_after_ms", unready);
      scenario.put("node_exited_after_ms", stopped);
      scenario.put("topics_on_leaving_node", itsTopics.size());
      scenario.put("clients_closed_with_1001", closedWith1001);
      scenario.put("refusals_by_status", traffic.refusals());
      Delivery.Summary delivery = traffic.analyse(Scenario.IN_FLIGHT_ALLOWANCE);
      scenario.delivery(delivery);
      ScenarioAssertions.deliveredAsPromised(delivery);
      assertTrue(Set.of(0, 143).contains(exit), "the node exits cleanly after SIGTERM, status " + exit);
      assertTrue(stopped < 30_000, "the node stopped within 30 s: " + stopped + " ms");
      assertTrue(!itsTopics.isEmpty(), "the leaving node hosted topics");
      assertEquals(2L * itsTopics.size(), closedWith1001, "each client of the leaving node was closed with 1001 once");
      assertTrue(!anyLeft, "no topic is left on the node that left");
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.report(passed);
    }
  }
}
