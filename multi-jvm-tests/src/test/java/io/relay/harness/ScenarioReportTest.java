package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report keeps a scenario's last run; the runs' log keeps every run. */
class ScenarioReportTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void aScenarioRunTwiceIsReportedOnceAndLoggedTwice() throws Exception {
    HarnessConfig config = new HarnessConfig(dir.resolve("relay.jar"), dir, dir.resolve("work"), dir.resolve("report"), dir, dir.resolve("builds"));

    ScenarioReport.record(config, result(951));
    ScenarioReport.record(config, result(1792));

    JsonNode report = JSON.readTree(config.reportDir().resolve("scenario-report.json").toFile());
    assertEquals(1, report.get("scenarios").size(), "one entry per scenario and proxy: " + report);
    assertEquals(1792, report.get("scenarios").get(0).get("reconnect_window_ms").get("p99").asLong(), "the last run's figures");
    List<String> runs = Files.readAllLines(config.reportDir().resolve("scenario-runs.jsonl"));
    assertEquals(2, runs.size(), "every run logged: " + runs);
    assertEquals(951, JSON.readTree(runs.get(0)).get("reconnect_window_ms").get("p99").asLong(), "the first run kept: " + runs);
    assertEquals(1062, JSON.readTree(runs.get(1)).get("clients_of_dead_node").asLong(), "with its own figures: " + runs);
  }

  private static ScenarioReport.Result result(long p99) {
    return new ScenarioReport.Result(
        "crash-at-size", true, "nginx", 1000, 500, p99, p99 + 10, 0, 354, 0, Map.of("clients_of_dead_node", 1062));
  }
}
