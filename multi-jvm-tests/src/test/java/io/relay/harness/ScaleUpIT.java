package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Scale up from 3 to 4 nodes under traffic on 50 topics, behind nginx and behind HAProxy: after
 * the proxy reload each topic gets a new participant, which lands on the topic's new owner; moved
 * topics converge there and their old hosts evict with 4001.
 */
class ScaleUpIT {
  @ParameterizedTest(name = "behind {0}")
  @ValueSource(strings = {"nginx", "haproxy"})
  void movedTopicsConvergeOnTheirNewOwner(String kind) {
    NodeProcess[] added = new NodeProcess[1];
    new TrafficScenario("scale-up-3-to-4", kind).topics("up", 50, 1).run(run -> {
      added[0] = run.cluster().scaleUp();
      long event = System.nanoTime();
      run.proxy().reload(run.cluster().running());
      run.traffic().topics().keySet().forEach(topic -> run.traffic().join(topic, topic + "/late"));
      run.awaitConverged("every topic is on exactly one node with all its participants", event);
    }, run -> {
      long onNewNode =
          run.converged().nodesByTopic().values().stream().filter(n -> n.contains(added[0].address())).count();
      run.scenario().put("topics_moved_to_new_node", onNewNode);
      assertTrue(onNewNode > 0, "some topics moved to the new node");
      assertTrue(run.scenario().evictions() >= onNewNode, "each moved topic was evicted from its old node");
    });
  }
}
