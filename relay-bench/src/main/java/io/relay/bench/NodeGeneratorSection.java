package io.relay.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The independent generator's figures in docs/benchmarks.md (relay-bench/node: Node.js and ws, from
 * {@code results-node.jsonl}): a table under each workload's section, and relay / nchan as
 * measured by each generator, written into {@link Report}'s page like its other sections.
 */
final class NodeGeneratorSection {
  private NodeGeneratorSection() {}

  /** Under workload {@code w}'s section: the Node generator's table of its runs of {@code w}, if any. */
  static void append(List<Map<String, Object>> node, String w) {
    List<Map<String, Object>> r = Results.of(node, w);
    if (r.isEmpty()) return;
    Report.md.append("As measured by the independent generator (Node.js and ws, two processes; latency from `ws.send()` to the reader's "
        + "'message' event: [benchmark-notes.md](benchmark-notes.md), \"The independent generator\"):\n\n");
    if (w.equals("W4")) {
      Report.md.append("| server | highest passing rate /s per topic | highest passing delivered MB/s | p99 ms at that step | server CPU % at that step | generator CPU % at that step | lost | reordered |\n"
          + "|---|---|---|---|---|---|---|---|\n");
      for (Map<String, Object> x : r) {
        Map<String, Object> pass = passing(x);
        Report.md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s |%n", x.get("label"), Results.fmt(x.get("highestPassingRate")),
            Results.fmt(x.get("highestPassingMBps")), pass == null ? "-" : Results.fmt(pass.get("p99Ms")), pass == null ? "-" : Results.fmt(pass.get("serverCpuPct")),
            pass == null ? "-" : Results.fmt(pass.get("generatorCpuPct")), Results.fmt(x.get("lostTotal")), Results.fmt(x.get("reorderedTotal"))));
      }
    } else {
      Report.md.append("| server | offered msg/s | delivered msg/s | delivered MB/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | lost | reordered | readers receiving | server CPU % | generator CPU % | connect p50 ms |\n"
          + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (Map<String, Object> x : r) {
        Report.md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s |%n", x.get("label"),
            Results.fmt(x.get("offeredMsgPerS")), Results.fmt(x.get("deliveredMsgPerS")), Results.fmt(x.get("deliveredMBps")), Results.fmt(x.get("p50Ms")),
            Results.fmt(x.get("p90Ms")), Results.fmt(x.get("p99Ms")), Results.fmt(x.get("p999Ms")), Results.fmt(x.get("maxMs")), Results.fmt(x.get("lostTotal")),
            Results.fmt(x.get("reorderedTotal")), Results.fmt(x.get("readersReceiving")), Results.fmt(x.get("readers")), Results.fmt(x.get("serverCpuPct")),
            Results.fmt(x.get("generatorCpuPct")), Results.fmt(x.get("connectP50Ms"))));
      }
    }
    Report.md.append("\n");
  }

  /**
   * Relay / nchan as measured by each generator: the relay's G1 configuration ({@code relay}, the one
   * both generators run) against the best nchan configuration, best runs each; empty without Node results.
   */
  static String comparison(List<Map<String, Object>> java, List<Map<String, Object>> node) {
    if (node.isEmpty()) return "";
    StringBuilder t = new StringBuilder("## Relay / nchan as measured by each generator\n\n"
        + "The same comparisons by the project's generator (Java, `relay-bench.jar`) and by an independent one the project was not tuned against "
        + "(Node.js with the ws library, `relay-bench/node`), each against its own runs: the `relay` configuration (G1) against the best nchan configuration, best runs. "
        + "The generators differ in what their latency includes ([benchmark-notes.md](benchmark-notes.md), \"The independent generator\").\n\n"
        + "| measure | generator | relay | best nchan | relay / nchan |\n|---|---|---|---|---|\n");
    for (Map<String, Object> x : node) {
      if (x.get("serverCpuPct") != null) x.put("cpuPerMBps", Results.cpuPerMBps(x));
    }
    row(t, java, node, "W1", "p99Ms", false, "W1 p99 ms");
    row(t, java, node, "W1", "cpuPerMBps", false, "W1 server CPU % per delivered MB/s");
    row(t, java, node, "W2", "p99Ms", false, "W2 p99 ms");
    row(t, java, node, "W3", "deliveredMBps", true, "W3 delivered MB/s");
    row(t, java, node, "W3", "cpuPerMBps", false, "W3 server CPU % per delivered MB/s");
    row(t, java, node, "W4", "highestPassingRate", true, "W4 highest passing rate /s per topic");
    long lost = 0, reordered = 0;
    for (Map<String, Object> x : node) {
      lost += (long) Results.num(x.get("lostTotal"));
      reordered += (long) Results.num(x.get("reorderedTotal"));
    }
    t.append(String.format(Locale.ROOT, "%nFrames lost in the Node generator's runs, all servers: %d; reordered: %d.%n%n", lost, reordered));
    return t.toString();
  }

  private static void row(StringBuilder t, List<Map<String, Object>> java, List<Map<String, Object>> node, String w, String key, boolean higherBetter, String measure) {
    for (String generator : List.of("java", "node-ws")) {
      List<Map<String, Object>> r = new ArrayList<>(Results.of(generator.equals("java") ? java : node, w));
      r.removeIf(x -> !x.containsKey(key) || Double.isNaN(Results.num(x.get(key))));
      if (r.stream().noneMatch(x -> "relay".equals(x.get("label"))) || r.stream().noneMatch(x -> Results.str(x.get("label")).startsWith("nchan"))) continue;
      double relay = Results.bestWhere(r, "relay"::equals, key, higherBetter);
      double nchan = Results.best(r, "nchan", key, higherBetter);
      t.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", measure, generator, Results.fmt(relay), Results.fmt(nchan),
          Tables.ratioText(relay / nchan, 1.0, higherBetter)));
    }
  }

  private static Map<String, Object> passing(Map<String, Object> x) {
    Map<String, Object> pass = null;
    for (Object o : Results.list(x.get("steps"))) {
      if (Boolean.TRUE.equals(Results.obj(o).get("pass"))) pass = Results.obj(o);
    }
    return pass;
  }
}
