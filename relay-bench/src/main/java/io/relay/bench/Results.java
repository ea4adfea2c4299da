package io.relay.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The results of {@code relay-bench/run} as {@link Report} reads them: rows of JSON lines as
 * plain maps, lists, strings, booleans and doubles, the rows of a workload, a configuration's best
 * figure, and figures formatted for the page.
 */
final class Results {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Results() {}

  static double best(List<Map<String, Object>> r, String prefix, String key, boolean max) {
    return bestWhere(r, label -> label.startsWith(prefix), key, max);
  }

  static double bestWhere(List<Map<String, Object>> r, Predicate<String> label, String key, boolean max) {
    double b = max ? -Double.MAX_VALUE : Double.MAX_VALUE;
    for (Map<String, Object> x : r) {
      if (!label.test(str(x.get("label")))) continue;
      double v = num(x.get(key));
      b = max ? Math.max(b, v) : Math.min(b, v);
    }
    return b;
  }

  static List<Map<String, Object>> of(List<Map<String, Object>> rows, String w) {
    List<Map<String, Object>> r = new ArrayList<>();
    for (Map<String, Object> x : rows) if (w.equals(x.get("workload"))) r.add(x);
    return r;
  }

  static double iperf(Path file) throws Exception {
    if (!Files.exists(file)) return Double.NaN;
    JsonNode received = JSON.readTree(file.toFile()).path("end").path("sum_received").path("bits_per_second");
    return received.isNumber() ? received.asDouble() : Double.NaN;
  }

  static String fmt(Object o) {
    if (o == null) return "-";
    if (o instanceof Double d) {
      if (d == Math.rint(d) && Math.abs(d) < 1e15) return Long.toString(d.longValue());
      return String.format(Locale.ROOT, Math.abs(d) >= 100 ? "%.0f" : Math.abs(d) >= 10 ? "%.1f" : "%.3g", d);
    }
    return o.toString();
  }

  static double num(Object o) { return o instanceof Double d ? d : Double.NaN; }

  /** A run's (or a W4 step's) server CPU % per delivered MB/s. */
  static double cpuPerMBps(Map<String, Object> run) { return num(run.get("serverCpuPct")) / num(run.get("deliveredMBps")); }
  static String str(Object o) { return o == null ? "" : o.toString(); }
  @SuppressWarnings("unchecked") static Map<String, Object> obj(Object o) { return (Map<String, Object>) o; }
  @SuppressWarnings("unchecked") static List<Object> list(Object o) { return o == null ? List.of() : (List<Object>) o; }

  /** The results in a file of JSON lines, as {@link #plain} maps. */
  static List<Map<String, Object>> jsonLines(Path file) throws Exception {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (String line : Files.readAllLines(file)) {
      if (!line.isBlank()) {
        rows.add(obj(plain(JSON.readTree(line))));
      }
    }
    return rows;
  }

  /** A JSON value of the generator's output as maps, lists, strings, booleans and doubles. */
  static Object plain(JsonNode node) {
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      node.fields().forEachRemaining(field -> map.put(field.getKey(), plain(field.getValue())));
      return map;
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>();
      node.forEach(element -> list.add(plain(element)));
      return list;
    }
    if (node.isNumber()) return node.asDouble();
    if (node.isBoolean()) return node.asBoolean();
    return node.isNull() ? null : node.asText();
  }
}
