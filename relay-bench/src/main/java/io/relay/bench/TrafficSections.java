package io.relay.bench;

import static io.relay.bench.Report.md;
import static io.relay.bench.Report.summary;
import static io.relay.bench.Results.best;
import static io.relay.bench.Results.fmt;
import static io.relay.bench.Results.list;
import static io.relay.bench.Results.num;
import static io.relay.bench.Results.obj;
import static io.relay.bench.Results.of;
import static io.relay.bench.Results.str;
import static io.relay.bench.Tables.chart;
import static io.relay.bench.Tables.latencyTable;
import static io.relay.bench.Tables.ratio;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The traffic workloads' sections of the {@link Report} page, W1 to W4, each with the independent
 * generator's table under it ({@link NodeGeneratorSection}), and their rows in the summary.
 */
final class TrafficSections {
  private TrafficSections() {}

  /**
   * @param plain the project's generator's plain (not wss) rows
   * @param node the independent generator's rows
   * @param tcp loopback TCP throughput, bits per second
   * @param chartTo where W4's chart goes
   */
  static void append(List<Map<String, Object>> plain, List<Map<String, Object>> node, double tcp, Path chartTo) throws Exception {
    // W1, W2
    for (String w : List.of("W1", "W2")) {
      List<Map<String, Object>> r = of(plain, w);
      if (r.isEmpty() && of(node, w).isEmpty()) continue;
      md.append(w.equals("W1") ? "## W1 video fan-out (50 topics, 1 writer + 4 readers, 20 KiB at 25/s per topic)\n\n"
          : "## W2 chat (200 topics, 2 participants, 100 B at 10/s per topic)\n\n");
      if (!r.isEmpty()) {
        latencyTable(r);
        ratio(r, "p99Ms", false, 1.2, w + " p99 ms");
      }
      if (w.equals("W1") && !r.isEmpty()) {
        cpuPerMBps(r, "W1");
      }
      NodeGeneratorSection.append(node, w);
    }
    w3(plain, node, tcp);
    w4(plain, node, tcp, chartTo);
  }

  /**
   * The server's CPU per delivered MB/s against nchan's least: what a server spends on each byte, which
   * W3 shows where its pace is set by the loopback path and the generator rather than by the server.
   */
  static void cpuPerMBps(List<Map<String, Object>> rows, String measure) {
    rows.forEach(x -> x.put("cpuPerMBps", Results.cpuPerMBps(x)));
    ratio(rows, "cpuPerMBps", false, 1.0, measure + " server CPU % per delivered MB/s");
  }

  private static void w3(List<Map<String, Object>> plain, List<Map<String, Object>> node, double tcp) {
    List<Map<String, Object>> w3 = of(plain, "W3");
    String w3Heading = "## W3 one stream (1 writer -> 1 reader, 64 KiB frames, as fast as the reader drains)\n\n";
    if (w3.isEmpty() && !of(node, "W3").isEmpty()) {
      md.append(w3Heading);
      NodeGeneratorSection.append(node, "W3");
    }
    if (!w3.isEmpty()) {
      md.append(w3Heading);
      latencyTable(w3);
      ratio(w3, "deliveredMBps", true, 1.2, "W3 delivered MB/s");
      cpuPerMBps(w3, "W3");
      double relay = best(w3, "relay", "deliveredMBps", true);
      double ofTcp = 100 * relay * 1e6 * 8 / tcp;
      md.append(String.format(Locale.ROOT, "W3 relay / loopback TCP: %.0f %% (goal >= 40 %%)%n%n", ofTcp));
      summary.append(String.format(Locale.ROOT, "| W3 delivered MB/s | relay | %.0f | loopback TCP %.0f | %.0f %% | >= 40 %% | %s |%n",
          relay, tcp / 8e6, ofTcp, ofTcp >= 40 ? "met" : "**not met**"));
      NodeGeneratorSection.append(node, "W3");
    }
  }

  private static void w4(List<Map<String, Object>> plain, List<Map<String, Object>> node, double tcp, Path chartTo) throws Exception {
    List<Map<String, Object>> w4 = of(plain, "W4");
    String w4Heading = "## W4 saturation (W1's shape, rate per topic stepped 25, 50, 100, 200, 300, 400 /s; pass = p99 <= 100 ms, delivery >= 95 % and at least 95 % of the rate offered)\n\n";
    if (w4.isEmpty() && !of(node, "W4").isEmpty()) {
      md.append(w4Heading);
      NodeGeneratorSection.append(node, "W4");
    }
    if (!w4.isEmpty()) {
      md.append(w4Heading);
      md.append("| server | run | highest passing rate /s per topic | highest passing delivered MB/s | server CPU at that step | generator CPU at that step |\n|---|---|---|---|---|---|\n");
      XYSeriesCollection lat = new XYSeriesCollection();
      Map<String, Integer> runs = new LinkedHashMap<>();
      for (Map<String, Object> r : w4) {
        String label = str(r.get("label"));
        int run = runs.merge(label, 1, Integer::sum);
        Map<String, Object> pass = null;
        XYSeries s = new XYSeries(label + " run " + run, false, true); // in step order
        for (Object o : list(r.get("steps"))) {
          Map<String, Object> st = obj(o);
          s.add(num(st.get("deliveredMBps")), Math.max(0.01, num(st.get("p99Ms"))));
          if (Boolean.TRUE.equals(st.get("pass"))) pass = st;
        }
        lat.addSeries(s);
        md.append(String.format(Locale.ROOT, "| %s | %d | %.0f | %.1f | %s %% | %s %% |%n", label, run, num(r.get("highestPassingRate")),
            num(r.get("highestPassingMBps")), pass == null ? "-" : fmt(pass.get("serverCpuPct")), pass == null ? "-" : fmt(pass.get("generatorCpuPct"))));
      }
      md.append("\n");
      ratio(w4, "highestPassingRate", true, 1.0, "W4 highest passing rate /s per topic");
      for (Map<String, Object> r : w4) {
        Map<String, Object> pass = null;
        for (Object o : list(r.get("steps"))) {
          if (Boolean.TRUE.equals(obj(o).get("pass"))) pass = obj(o);
        }
        r.put("passCpuPerMBps", pass == null ? Double.POSITIVE_INFINITY : Results.cpuPerMBps(pass));
      }
      ratio(w4, "passCpuPerMBps", false, 1.0, "W4 server CPU % per delivered MB/s at the highest passing step");
      md.append(String.format(Locale.ROOT, "W4 best relay / loopback TCP: %.0f %%%n%n", 100 * best(w4, "relay", "highestPassingMBps", true) * 8e6 / tcp));
      md.append("Every step (where a late message waited: the relay's event loops, their probes that ran over 50 ms late, "
          + "`relay_event_loop_delay_seconds`; the generator's, the most a message went out after its writer's rate asked):\n\n"
          + "| server | rate /s per topic | offered msg/s | delivered MB/s | delivery | p50 ms | p99 ms | p99.9 ms | max ms | server CPU % | generator CPU % | relay loops over 50 ms late | generator's sends late, max ms | pass |\n"
          + "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (Map<String, Object> r : w4) {
        for (Object o : list(r.get("steps"))) {
          Map<String, Object> st = obj(o);
          double loopsLate = st.get("serverLoopDelaysOver50ms") == null ? -1 : num(st.get("serverLoopDelaysOver50ms"));
          md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", r.get("label"), fmt(st.get("rate")), fmt(st.get("offeredMsgPerS")),
              fmt(st.get("deliveredMBps")), fmt(st.get("deliveryRatio")), fmt(st.get("p50Ms")), fmt(st.get("p99Ms")), fmt(st.get("p999Ms")), fmt(st.get("maxMs")),
              fmt(st.get("serverCpuPct")), fmt(st.get("generatorCpuPct")), loopsLate < 0 ? "-" : fmt(loopsLate), fmt(st.get("generatorSendLateMaxMs")), st.get("pass")));
        }
      }
      md.append("\nBeyond saturation (twice the highest passing rate; the server's and the generator's CPU and the relay's time in garbage collection, over the window):\n\n"
          + "| server | rate /s per topic | delivered MB/s | delivery | p99 ms | connections open / total | frames dropped by the server | server heap MB | server CPU % | generator CPU % | GC s |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
      for (Map<String, Object> r : w4) {
        if (r.get("overload") == null) continue;
        Map<String, Object> o = obj(r.get("overload"));
        md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s |%n", r.get("label"), fmt(o.get("rate")), fmt(o.get("deliveredMBps")), fmt(o.get("deliveryRatio")),
            fmt(o.get("p99Ms")), fmt(o.get("openConnections")), fmt(o.get("connections")), fmt(o.get("serverDroppedFrames")), fmt(o.get("serverHeapMB")),
            fmt(o.get("serverCpuPct")), fmt(o.get("generatorCpuPct")), fmt(o.get("serverGcSeconds"))));
      }
      for (Map<String, Object> r : w4) {
        if (!str(r.get("label")).startsWith("relay") || r.get("overload") == null) continue;
        Map<String, Object> o = obj(r.get("overload"));
        boolean ok = num(o.get("openConnections")) == num(o.get("connections")) && num(o.get("serverHeapMB")) < 1024;
        boolean counted = num(o.get("serverDroppedFrames")) >= 0;
        md.append(String.format(Locale.ROOT, "%nRelay at twice its highest passing rate: %s of %s connections open, heap %s MB (limit 1024), %s: graceful degradation %s.%n",
            fmt(o.get("openConnections")), fmt(o.get("connections")), fmt(o.get("serverHeapMB")),
            counted ? fmt(o.get("serverDroppedFrames")) + " frames dropped and counted by the server" : "frames dropped not read (its metrics endpoint did not answer within 5 s)",
            ok ? (counted ? "**holds**" : "**holds** for connections and heap") : "**does not hold**"));
      }
      md.append("\n");
      chart(lat, "W4: p99 latency against delivered load", "delivered MB/s", "p99 latency, ms (log)", chartTo.toFile(), true);
      md.append("![W4 p99 latency against load](" + chartTo.getFileName() + ")\n\n");
      NodeGeneratorSection.append(node, "W4");
    }
  }
}
