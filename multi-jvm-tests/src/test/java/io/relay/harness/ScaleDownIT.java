package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Scale down from 4 to 3 with SIGTERM under traffic: the leaving node turns unready, the proxy
 * drops it (as an ingress drops an unready endpoint), it closes its clients with 1001 and exits;
 * every one of its clients reconnects to a remaining node.
 */
class ScaleDownIT {
  @Test
  void theLeavingNodesClientsAllReconnectElsewhere() {
    List<String> itsTopics = new ArrayList<>();
    String[] leavingAddress = new String[1];
    new TrafficScenario("scale-down-4-to-3-sigterm", "nginx").nodes(4, Map.of("RELAY_DRAIN_DELAY", "2s")).topics("down", 50, 1).run(run -> {
      NodeProcess leaving = run.cluster().running().get(1);
      leavingAddress[0] = leaving.address();
      run.converged().nodesByTopic().forEach((topic, nodes) -> {
        if (nodes.contains(leaving.address())) {
          itsTopics.add(topic);
        }
      });
      long event = System.nanoTime();
      run.scenario().counters(List.of(leaving));
      CompletableFuture<Long> exitedAt = leaving.process().onExit().thenApply(exited -> System.nanoTime());
      run.cluster().terminate(leaving);
      long unready = Await.until("the leaving node turns unready", Duration.ofSeconds(10), () -> !leaving.isReady());
      run.proxy().reload(run.cluster().running());
      run.awaitConverged("every topic is on exactly one remaining node with all its participants", event,
          now -> now.nodesByTopic().values().stream().noneMatch(n -> n.contains(leaving.address())));
      int exit = leaving.process().awaitExit(Duration.ofSeconds(30));
      long stopped = (Await.value("the leaving node's exit is seen", Duration.ofSeconds(10), exitedAt) - event) / 1_000_000;
      run.scenario().put("unready_after_ms", unready);
      run.scenario().put("node_exited_after_ms", stopped);
      run.scenario().put("topics_on_leaving_node", itsTopics.size());
      assertTrue(Set.of(0, 143).contains(exit), "the node exits cleanly after SIGTERM, status " + exit);
      assertTrue(stopped < 30_000, "the node exited within 30 s of its SIGTERM: " + stopped + " ms");
      assertTrue(!itsTopics.isEmpty(), "the leaving node hosted topics");
    }, run -> {
      boolean anyLeft =
          run.converged().nodesByTopic().values().stream().anyMatch(n -> n.contains(leavingAddress[0]));
      long closedWith1001 =
          run.traffic().topics().values().stream().flatMap(t -> t.participants().stream()).mapToLong(p -> p.closesWith(1001)).sum();
      run.scenario().put("topics_reclaimed", run.scenario().claims());
      run.scenario().put("clients_closed_with_1001", closedWith1001);
      assertEquals(2L * itsTopics.size(), closedWith1001, "each client of the leaving node was closed with 1001 once");
      assertTrue(!anyLeft, "no topic is left on the node that left");
    });
  }
}
