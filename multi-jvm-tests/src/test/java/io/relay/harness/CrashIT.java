package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * SIGKILL one of 3 nodes under traffic: its clients lose their connections, reconnect (the proxy
 * drops the dead node, as an ingress does when its endpoint fails), and the survivors serve the
 * topics again; the cluster downs and removes the dead node.
 */
class CrashIT {
  @Test
  void survivorsServeTheDeadNodesTopics() {
    new TrafficScenario("crash-1-of-3-sigkill", "nginx").topics("crash", 50, 1).run(run -> {
      NodeProcess victim = run.cluster().running().get(2);
      Set<String> hosted = run.converged().topicsByNode().getOrDefault(victim.address(), Set.of());
      long event = System.nanoTime();
      run.cluster().crash(victim);
      run.traffic().crashed(hosted, event);
      run.proxy().reload(run.cluster().running());
      NodeProcess survivor = run.cluster().running().get(0);
      long removed = Await.until("the cluster removes the dead node", Duration.ofSeconds(60), () -> survivor.metric("relay_cluster_members") == 2);
      run.awaitConverged("every topic is on exactly one survivor with all its participants", event);
      run.scenario().put("topics_on_dead_node", hosted.size());
      run.scenario().put("dead_node_removed_after_ms", removed);
      assertTrue(!hosted.isEmpty(), "the killed node hosted topics");
    });
  }
}
