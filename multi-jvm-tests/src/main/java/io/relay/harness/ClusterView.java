package io.relay.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** Where the cluster says each topic's connections are, from {@code GET /status}. */
public final class ClusterView {
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Nodes hosting each topic, connection counts, and nodes that did not answer. */
  public record Snapshot(Map<String, Set<String>> nodesByTopic, Map<String, Integer> connectionsByTopic, String missingNodes) {
    /** Every topic on exactly one node with its expected number of connections, nobody missing. */
    public boolean converged(Map<String, Integer> expected) {
      if (!missingNodes.isEmpty()) {
        return false;
      }
      for (Map.Entry<String, Integer> topic : expected.entrySet()) {
        if (nodesByTopic.getOrDefault(topic.getKey(), Set.of()).size() != 1
            || !topic.getValue().equals(connectionsByTopic.get(topic.getKey()))) {
          return false;
        }
      }
      return true;
    }

    /** The topics each node hosts. */
    public Map<String, Set<String>> topicsByNode() {
      Map<String, Set<String>> byNode = new HashMap<>();
      nodesByTopic.forEach((topic, nodes) -> nodes.forEach(node -> byNode.computeIfAbsent(node, n -> new HashSet<>()).add(topic)));
      return byNode;
    }
  }

  private ClusterView() {}

  public static Snapshot status(String accessUrl) {
    try {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(accessUrl + "/status"))
                  .header("Authorization", Tokens.admin("relay:stats"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        return new Snapshot(Map.of(), Map.of(), "status answered " + response.statusCode());
      }
      Map<String, Set<String>> nodes = new HashMap<>();
      Map<String, Integer> counts = new HashMap<>();
      for (JsonNode report : JSON.readTree(response.body())) {
        String topic = report.get("topic").asText();
        nodes.computeIfAbsent(topic, t -> new HashSet<>()).add(report.get("node").asText());
        counts.merge(topic, 1, Integer::sum);
      }
      return new Snapshot(nodes, counts, response.headers().firstValue("X-Relay-Missing-Nodes").orElse(""));
    } catch (IOException e) {
      return new Snapshot(Map.of(), Map.of(), "status failed: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
