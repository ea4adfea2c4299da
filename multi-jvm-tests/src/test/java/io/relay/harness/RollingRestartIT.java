package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rolling restart of all 3 nodes, one by one, under traffic: each is stopped with SIGTERM (and
 * dropped from the proxy once unready), a replacement joins and is added to the proxy; nobody is
 * left disconnected and nothing is lost outside reconnect windows.
 */
class RollingRestartIT {
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @Test
  void nobodyIsLeftDisconnected() {
    Scenario scenario = new Scenario(config, "rolling-restart-3", "nginx");
    boolean passed = false;
    try (Proxy proxy = new Proxy.Nginx(config);
        RelayCluster cluster = new RelayCluster(config, proxy.relayUrl(), Map.of("RELAY_DRAIN_DELAY", "2s")).start(3);
        Traffic traffic = new Traffic(proxy.accessUrl())) {
      proxy.start(cluster.running());
      traffic.topics("roll", 30, 1).connect(Duration.ofSeconds(60));
      traffic.startSending(Duration.ofMillis(50));
      Await.pause(2000);
      scenario.countersBefore(cluster.running());

      long event = System.nanoTime();
      List<NodeProcess> originals = cluster.running();
      for (NodeProcess old : originals) {
        cluster.terminate(old);
        Await.until(old + " turns unready", Duration.ofSeconds(10), () -> !old.isReady());
        proxy.reload(cluster.running());
        old.process().awaitExit(Duration.ofSeconds(30));
        cluster.scaleUp();
        proxy.reload(cluster.running());
      }
      Await.until("every topic is on exactly one new node with all its participants", Duration.ofSeconds(60),
          () -> ClusterView.status(proxy.accessUrl()).converged(ScenarioAssertions.expected(traffic)));
      scenario.convergence((System.nanoTime() - event) / 1_000_000);
      Await.pause(2000);
      traffic.stopSending(Duration.ofSeconds(1));
      scenario.countersAfter(cluster.running());

      scenario.put("refusals_by_status", traffic.refusals());
      Delivery.Summary delivery = traffic.analyse(Scenario.IN_FLIGHT_ALLOWANCE);
      scenario.delivery(delivery);
      ScenarioAssertions.deliveredAsPromised(delivery);
      assertTrue(traffic.allConnected(), "everyone is connected at the end");
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.report(passed);
    }
  }
}
