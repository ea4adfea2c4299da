package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scale up from 3 to 4 nodes under traffic on 50 topics, behind nginx and behind HAProxy: after
 * the proxy reload each topic gets a new participant, which lands on the topic's new owner; moved
 * topics converge there and their old hosts evict with 4001.
 */
class ScaleUpIT {
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @ParameterizedTest(name = "behind {0}")
  @ValueSource(strings = {"nginx", "haproxy"})
  void movedTopicsConvergeOnTheirNewOwner(String kind) {
    Scenario scenario = new Scenario(config, "scale-up-3-to-4", kind);
    boolean passed = false;
    try (Proxy proxy = kind.equals("nginx") ? new Proxy.Nginx(config) : new Proxy.Haproxy(config);
        RelayCluster cluster = new RelayCluster(config, proxy.relayUrl(), Map.of()).start(3);
        Traffic traffic = new Traffic(proxy.accessUrl())) {
      proxy.start(cluster.running());
      traffic.topics("up", 50, 1).connect(Duration.ofSeconds(60));
      traffic.startSending(Duration.ofMillis(50));
      Await.pause(2000);
      scenario.countersBefore(cluster.running());

      NodeProcess added = cluster.scaleUp();
      long event = System.nanoTime();
      proxy.reload(cluster.running());
      traffic.topics().keySet().forEach(topic -> traffic.join(topic, topic + "/late"));
      Await.until("every topic is on exactly one node with all its participants", Duration.ofSeconds(60),
          () -> ClusterView.status(proxy.accessUrl()).converged(ScenarioAssertions.expected(traffic)));
      scenario.convergence((System.nanoTime() - event) / 1_000_000);
      Await.pause(2000);
      traffic.stopSending(Duration.ofSeconds(1));
      scenario.countersAfter(cluster.running());

      ClusterView.Snapshot end = ClusterView.status(proxy.accessUrl());
      long onNewNode = end.nodesByTopic().values().stream().filter(n -> n.contains(added.address())).count();
      scenario.put("topics_moved_to_new_node", onNewNode);
      scenario.put("refusals_by_status", traffic.refusals());
      Delivery.Summary delivery = traffic.analyse(Scenario.IN_FLIGHT_ALLOWANCE);
      scenario.delivery(delivery);
      ScenarioAssertions.deliveredAsPromised(delivery);
      assertTrue(onNewNode > 0, "some topics moved to the new node");
      assertTrue(scenario.evictions() >= onNewNode, "each moved topic was evicted from its old node");
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.report(passed);
    }
  }
}
