package io.relay.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.harness.HarnessConfig;
import io.relay.testing.Await;
import io.relay.testing.ClusterPki;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Cluster Bootstrap through a discovery method (config, standing in for the Kubernetes pod list):
 * three node JVMs that know only each other's management endpoints form one cluster, and a fourth
 * started later joins it rather than forming its own.
 */
class ClusterBootstrapIT {
  private static final Duration FORMATION = Duration.ofSeconds(90);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void threeNodesFormOneClusterThroughDiscoveryAndAFourthJoinsIt() throws Exception {
    List<NodeJvm> nodes = new ArrayList<>();
    // one certificate for every node, as the pods of the Deployment mount one cert-manager Secret
    Path work = Files.createTempDirectory(Files.createDirectories(HarnessConfig.fromSystemProperties().workDir()), "bootstrap-pki-");
    Path tls = ClusterPki.create(work.resolve("ca"), "bootstrap-test-ca").issue(work.resolve("relay-cluster-tls"), ClusterPki.CLUSTER_NAME);
    try {
      for (int i = 1; i <= 3; i++) {
        nodes.add(new NodeJvm("bootstrap-" + i));
      }
      String endpoints = nodes.stream().map(NodeJvm::managementEndpoint).collect(Collectors.joining(","));
      for (NodeJvm node : nodes) {
        node.start(settings(endpoints, 3, tls));
      }
      for (NodeJvm node : nodes) {
        node.awaitReady(FORMATION);
      }
      Set<String> three = nodes.stream().map(NodeJvm::address).collect(Collectors.toCollection(TreeSet::new));
      for (NodeJvm node : nodes) {
        Await.until(node + " lists the three nodes as Up", FORMATION, () -> three.equals(upMembers(node)));
      }

      NodeJvm fourth = new NodeJvm("bootstrap-4");
      nodes.add(fourth);
      fourth.start(settings(endpoints + "," + fourth.managementEndpoint(), 3, tls));
      fourth.awaitReady(FORMATION);
      Set<String> four = nodes.stream().map(NodeJvm::address).collect(Collectors.toCollection(TreeSet::new));
      for (NodeJvm node : nodes) {
        Await.until(node + " lists all four nodes as Up", FORMATION, () -> four.equals(upMembers(node)));
      }
      Set<String> leaders = nodes.stream().map(ClusterBootstrapIT::leader).collect(Collectors.toSet());
      assertEquals(1, leaders.size(), "one cluster, one leader: " + leaders);
      assertTrue(four.containsAll(leaders), "the leader is one of the four nodes: " + leaders);
    } finally {
      nodes.forEach(NodeJvm::close);
    }
  }

  private static Map<String, String> settings(String endpoints, int required, Path tls) {
    return Map.of(
        "RELAY_CLUSTER_TLS_DIR", tls.toString(),
        "RELAY_SECRET", "bootstrap-test-secret-0123456789abcdef",
        "RELAY_DISCOVERY", "config",
        "RELAY_DISCOVERY_ENDPOINTS", endpoints,
        "RELAY_DISCOVERY_REQUIRED_CONTACT_POINTS", String.valueOf(required),
        "RELAY_APP_VERSION", "2");
  }

  private static Set<String> upMembers(NodeJvm node) {
    JsonNode members = members(node);
    Set<String> up = new TreeSet<>();
    members.path("members").forEach(m -> {
      if (m.path("status").asText().equals("Up")) {
        up.add(m.path("node").asText());
      }
    });
    return up;
  }

  private static String leader(NodeJvm node) {
    return members(node).path("leader").asText();
  }

  private static JsonNode members(NodeJvm node) {
    try {
      String body = node.get("/cluster/members").body();
      return body.isEmpty() ? JSON.createObjectNode() : JSON.readTree(body);
    } catch (IOException e) {
      return JSON.createObjectNode();
    }
  }
}
