package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * SIGKILL one of 3 nodes under traffic: its clients lose their connections, reconnect (the proxy
 * drops the dead node, as an ingress does when its endpoint fails), and the survivors serve the
 * topics again; the cluster downs and removes the dead node.
 */
class CrashIT {
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @Test
  void survivorsServeTheDeadNodesTopics() {
    Scenario scenario = new Scenario(config, "crash-1-of-3-sigkill", "nginx");
    boolean passed = false;
    try (Proxy proxy = new Proxy.Nginx(config);
        RelayCluster cluster = new RelayCluster(config, proxy.relayUrl(), Map.of()).start(3);
        Traffic traffic = new Traffic(proxy.accessUrl())) {
      proxy.start(cluster.running());
      traffic.topics("crash", 50, 1).connect(Duration.ofSeconds(60));
      traffic.startSending(Duration.ofMillis(50));
      Await.pause(2000);
      scenario.countersBefore(cluster.running());

      NodeProcess victim = cluster.running().get(2);
      long hosted = ClusterView.status(proxy.accessUrl()).nodesByTopic().values().stream().filter(n -> n.contains(victim.address())).count();
      long event = System.nanoTime();
      cluster.crash(victim);
      proxy.reload(cluster.running());
      NodeProcess survivor = cluster.running().get(0);
      long removed = Await.until("the cluster removes the dead node", Duration.ofSeconds(60), () -> survivor.metric("relay_cluster_members") == 2);
      Await.until("every topic is on exactly one survivor with all its participants", Duration.ofSeconds(60),
          () -> ClusterView.status(proxy.accessUrl()).converged(ScenarioAssertions.expected(traffic)));
      scenario.convergence((System.nanoTime() - event) / 1_000_000);
      Await.pause(2000);
      traffic.stopSending(Duration.ofSeconds(1));
      scenario.countersAfter(cluster.running());

      scenario.put("topics_on_dead_node", hosted);
      scenario.put("dead_node_removed_after_ms", removed);
      scenario.put("refusals_by_status", traffic.refusals());
      Delivery.Summary delivery = traffic.analyse(Scenario.IN_FLIGHT_ALLOWANCE);
      scenario.delivery(delivery);
      ScenarioAssertions.deliveredAsPromised(delivery);
      assertTrue(hosted > 0, "the killed node hosted topics");
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.report(passed);
    }
  }
}
