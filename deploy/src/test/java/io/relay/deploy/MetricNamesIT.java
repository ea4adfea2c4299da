package io.relay.deploy;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Every metric (the node's, its JVM's and its process's) the dashboard and the alert rules query is one a live node exports. */
class MetricNamesIT {
  private static final Pattern METRIC = Pattern.compile("\\b(?:relay|jvm|process)_[a-z_]+\\b");

  @Test
  void theDashboardAndAlertsUseOnlyMetricsANodeExports() throws IOException {
    Path monitoring = Manifests.deployDir().resolve("monitoring");
    Set<String> used = new TreeSet<>();
    JsonNode dashboard = new ObjectMapper().readTree(monitoring.resolve("relay-dashboard.json").toFile());
    dashboard.path("panels").forEach(panel -> panel.path("targets").forEach(t -> collect(t.path("expr").asText(), used)));
    JsonNode rules = Manifests.yaml(monitoring.resolve("relay-alerts.yaml"));
    rules.path("groups").forEach(g -> g.path("rules").forEach(r -> collect(r.path("expr").asText(), used)));
    assertTrue(used.size() >= 10, "metrics used: " + used);

    try (NodeJvm node = new NodeJvm("metrics").start(Map.of("RELAY_SECRET", "metrics-test-secret-0123456789abcdef", "RELAY_CLUSTER_TRANSPORT", "tcp"))) {
      node.awaitReady(Duration.ofSeconds(60));
      String exposition = node.get("/metrics").body();
      Set<String> exported = new TreeSet<>();
      exposition.lines().filter(l -> l.startsWith("# TYPE ")).forEach(l -> exported.add(l.split(" ")[2]));
      // counters are exposed as <name>_total with "# TYPE <name>_total counter" or "# TYPE <name> counter"
      Set<String> samples = new TreeSet<>();
      exposition.lines().filter(l -> !l.startsWith("#")).forEach(l -> samples.add(l.split("[{ ]")[0]));
      Set<String> missing = new TreeSet<>(used);
      missing.removeAll(samples);
      assertTrue(missing.isEmpty(), "used by the dashboard or alerts but not exported by a node: " + missing + "; exported: " + samples + " " + exported);
    }
  }

  private static void collect(String expression, Set<String> into) {
    Matcher m = METRIC.matcher(expression);
    while (m.find()) {
      into.add(m.group());
    }
  }
}
