package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Rolling restart of all 3 nodes under traffic, in the order of the shipped Deployment's strategy
 * (deploy/kubernetes/base/deployment.yaml: {@code maxSurge: 1}, {@code maxUnavailable: 0}): a
 * replacement joins and is added to the proxy, then one old node is stopped with SIGTERM and
 * dropped from the proxy once unready, and the next replacement starts while it drains. Nobody is
 * left disconnected and nothing is lost outside reconnect windows.
 */
class RollingRestartIT {
  @Test
  void nobodyIsLeftDisconnected() {
    new TrafficScenario("rolling-restart-3", "nginx").nodes(3, Map.of("RELAY_DRAIN_DELAY", "2s")).topics("roll", 30, 1).run(run -> {
      long event = System.nanoTime();
      List<NodeProcess> originals = run.cluster().running();
      for (NodeProcess old : originals) {
        run.cluster().scaleUp();
        run.proxy().reload(run.cluster().running());
        run.scenario().counters(List.of(old));
        run.cluster().terminate(old);
        Await.until(old + " turns unready", Duration.ofSeconds(10), () -> !old.isReady());
        run.proxy().reload(run.cluster().running());
      }
      originals.forEach(old -> old.process().awaitExit(Duration.ofSeconds(30)));
      run.awaitConverged("every topic is on exactly one new node with all its participants", event);
    }, run -> assertTrue(run.traffic().allConnected(), "everyone is connected at the end"));
  }
}
