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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The scenario report: {@code scenario-report.json} and {@code scenario-report.md} in the report
 * directory, one entry per scenario and proxy, replaced when that scenario runs again; and {@code
 * scenario-runs.jsonl} beside them, every run's entry appended as one line with when it ended, so
 * that repeated runs of a scenario (at size, by hand) keep all their figures. When the harness is
 * given a page ({@link HarnessConfig#reportPage()}), the report's text is also written there,
 * between {@link #START} and {@link #END}, so that the page states no figure of its own.
 */
public final class ScenarioReport {
  static final String START = "<!-- scenario-report:start -->";
  static final String END = "<!-- scenario-report:end -->";
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
  /** The fields every entry has, shown in the first table. */
  private static final Set<String> COMMON =
      Set.of("name", "passed", "proxy", "convergence_ms", "reconnect_window_ms", "frames_lost_outside_window", "claims", "evictions");

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
      Files.writeString(config.reportDir().resolve("scenario-report.md"), "# Scenario report\n\n" + section(root));
      if (config.reportPage().isPresent()) {
        writeSection(config.reportPage().get(), root);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String machine() {
    return Runtime.getRuntime().availableProcessors() + " cores, "
        + (Runtime.getRuntime().maxMemory() >> 20) + " MiB max heap for the test JVM, Java "
        + System.getProperty("java.version");
  }

  /** Replaces what lies between the page's markers with the report's text. */
  static void writeSection(Path page, JsonNode root) throws IOException {
    String text = Files.readString(page);
    int start = text.indexOf(START);
    int end = text.indexOf(END);
    if (start < 0 || end < start) {
      throw new IllegalStateException(page + " has no " + START + " ... " + END + " block for the scenario report");
    }
    Files.writeString(page, text.substring(0, start + START.length()) + "\n" + section(root) + text.substring(end));
  }

  /**
   * The report as text: the machine, one row of the common figures per scenario ({@code -} where a
   * scenario has none: no convergence measured, no reconnect window), then each scenario's own
   * figures by name.
   */
  static String section(JsonNode root) {
    StringBuilder md = new StringBuilder("Machine: " + root.get("machine").asText() + "; each scenario's last run.\n\n");
    md.append("| scenario | proxy | passed | convergence ms | reconnect window p50 / p99 / max ms | frames lost outside window | claims | evictions |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    for (JsonNode s : root.get("scenarios")) {
      JsonNode w = s.get("reconnect_window_ms");
      long convergence = s.get("convergence_ms").asLong();
      md.append(String.format(
          "| %s | %s | %s | %s | %s | %d | %d | %d |%n",
          s.get("name").asText(), s.get("proxy").asText(), s.get("passed").asBoolean() ? "yes" : "**no**",
          convergence < 0 ? "-" : String.valueOf(convergence),
          w.get("max").asLong() == 0 ? "-" : w.get("p50").asLong() + " / " + w.get("p99").asLong() + " / " + w.get("max").asLong(),
          s.get("frames_lost_outside_window").asLong(), s.get("claims").asLong(), s.get("evictions").asLong()));
    }
    md.append("\n| scenario | proxy | its own figures |\n|---|---|---|\n");
    for (JsonNode s : root.get("scenarios")) {
      List<String> names = new ArrayList<>();
      s.fieldNames().forEachRemaining(names::add);
      names.removeAll(COMMON);
      names.sort(null);
      List<String> figures = names.stream().map(name -> "`" + name + "` " + value(s.get(name))).toList();
      md.append("| ").append(s.get("name").asText()).append(" | ").append(s.get("proxy").asText()).append(" | ")
          .append(String.join(", ", figures)).append(" |\n");
    }
    return md.toString();
  }

  private static String value(JsonNode value) {
    if (value.isTextual()) {
      return value.asText();
    }
    if (value.isFloatingPointNumber() && value.asDouble() == Math.rint(value.asDouble())) {
      return String.valueOf(value.asLong());
    }
    return value.toString();
  }
}
