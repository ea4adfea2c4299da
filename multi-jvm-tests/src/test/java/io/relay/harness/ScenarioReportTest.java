package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report keeps a scenario's last run; the runs' log keeps every run; a page given to the harness gets the report's text. */
class ScenarioReportTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  @Test
  void aScenarioRunTwiceIsReportedOnceAndLoggedTwice() throws Exception {
    HarnessConfig config = config(Optional.empty());

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

  @Test
  void aPageGetsTheReportBetweenItsMarkersAndKeepsEverythingElse() throws Exception {
    Path page = dir.resolve("scenarios.md");
    Files.writeString(page, "# Scenarios\n\nBefore.\n\n" + ScenarioReport.START + "\nan old run\n" + ScenarioReport.END + "\n\nAfter.\n");

    ScenarioReport.record(config(Optional.of(page)), result(1792));

    String text = Files.readString(page);
    assertTrue(text.startsWith("# Scenarios\n\nBefore.\n\n" + ScenarioReport.START + "\nMachine: "), text);
    assertTrue(text.endsWith(ScenarioReport.END + "\n\nAfter.\n"), text);
    assertFalse(text.contains("an old run"), text);
    assertTrue(text.contains("| crash-at-size | nginx | yes | 1000 | 500 / 1792 / 1802 | 0 | 354 | 0 |"), text);
    assertTrue(text.contains("| crash-at-size | nginx | `clients_of_dead_node` 1062 |"), "the scenario's own figures: " + text);
    assertEquals(
        Files.readString(dir.resolve("report").resolve("scenario-report.md")), "# Scenario report\n\n" + text.substring(text.indexOf("Machine: "), text.indexOf(ScenarioReport.END)),
        "the page holds what the report file holds");
  }

  @Test
  void aPageWithoutTheMarkersIsRefusedSayingWhatItLacks() throws Exception {
    Path page = dir.resolve("scenarios.md");
    Files.writeString(page, "# Scenarios\n");
    IllegalStateException refused = assertThrows(IllegalStateException.class, () -> ScenarioReport.record(config(Optional.of(page)), result(951)));
    assertTrue(refused.getMessage().contains(ScenarioReport.START), refused.getMessage());
    assertEquals("# Scenarios\n", Files.readString(page), "the page is left as it was");
  }

  private HarnessConfig config(Optional<Path> page) {
    return new HarnessConfig(dir.resolve("relay.jar"), dir, dir.resolve("work"), dir.resolve("report"), dir, dir.resolve("builds"), page);
  }

  private static ScenarioReport.Result result(long p99) {
    return new ScenarioReport.Result(
        "crash-at-size", true, "nginx", 1000, 500, p99, p99 + 10, 0, 354, 0, Map.of("clients_of_dead_node", 1062));
  }
}
