package io.relay.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;

/**
 * The scenario report: {@code scenario-report.json} and {@code scenario-report.md} in the report
 * directory, one entry per scenario and proxy, replaced when that scenario runs again; and {@code
 * scenario-runs.jsonl} beside them, every run's entry appended as one line with when it ended, so
 * that repeated runs of a scenario (at size, by hand) keep all their figures.
 */
public final class ScenarioReport {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  /** One scenario's measured figures. */
  public record Result(
      String name,
      boolean passed,
      String proxy,
      long convergenceMs,
      long windowP50,
      long windowP99,
      long windowMax,
      long framesLostOutsideWindow,
      long claims,
      long evictions,
      Map<String, Object> extra) {}

  private ScenarioReport() {}

  /** Adds or replaces {@code result} in the report files and appends it to the runs' log. */
  public static synchronized void record(HarnessConfig config, Result result) {
    try {
      Files.createDirectories(config.reportDir());
      Path json = config.reportDir().resolve("scenario-report.json");
      ObjectNode root = Files.exists(json) ? (ObjectNode) JSON.readTree(json.toFile()) : JSON.createObjectNode();
      ArrayNode scenarios = root.has("scenarios") ? (ArrayNode) root.get("scenarios") : root.putArray("scenarios");
      for (int i = scenarios.size() - 1; i >= 0; i--) {
        JsonNode old = scenarios.get(i);
        if (old.get("name").asText().equals(result.name()) && old.get("proxy").asText().equals(result.proxy())) {
          scenarios.remove(i);
        }
      }
      ObjectNode entry = scenarios.addObject();
      entry.put("name", result.name());
      entry.put("passed", result.passed());
      entry.put("proxy", result.proxy());
      entry.put("convergence_ms", result.convergenceMs());
      ObjectNode window = entry.putObject("reconnect_window_ms");
      window.put("p50", result.windowP50());
      window.put("p99", result.windowP99());
      window.put("max", result.windowMax());
      entry.put("frames_lost_outside_window", result.framesLostOutsideWindow());
      entry.put("claims", result.claims());
      entry.put("evictions", result.evictions());
      result.extra().forEach((key, value) -> entry.set(key, JSON.valueToTree(value)));
      root.put("machine", machine());
      JSON.writeValue(json.toFile(), root);
      ObjectNode run = entry.deepCopy();
      run.put("ended", Instant.now().toString());
      run.put("machine", machine());
      Files.writeString(
          config.reportDir().resolve("scenario-runs.jsonl"),
          JSON.writer().without(SerializationFeature.INDENT_OUTPUT).writeValueAsString(run) + "\n",
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
      Files.writeString(config.reportDir().resolve("scenario-report.md"), markdown(root));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String machine() {
    return Runtime.getRuntime().availableProcessors() + " cores, "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB max heap for the test JVM, Java "
        + System.getProperty("java.version");
  }

  private static String markdown(JsonNode root) {
    StringBuilder md = new StringBuilder("# Scenario report\n\nMachine: " + root.get("machine").asText() + "\n\n");
    md.append("| scenario | proxy | passed | convergence ms | reconnect window p50 / p99 / max ms | frames lost outside window | claims | evictions |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    for (JsonNode s : root.get("scenarios")) {
      JsonNode w = s.get("reconnect_window_ms");
      md.append(String.format(
          "| %s | %s | %s | %d | %d / %d / %d | %d | %d | %d |%n",
          s.get("name").asText(), s.get("proxy").asText(), s.get("passed").asBoolean() ? "yes" : "**no**",
          s.get("convergence_ms").asLong(), w.get("p50").asLong(), w.get("p99").asLong(), w.get("max").asLong(),
          s.get("frames_lost_outside_window").asLong(), s.get("claims").asLong(), s.get("evictions").asLong()));
    }
    return md.toString();
  }
}
