package io.relay.bench;

import static io.relay.bench.Report.md;
import static io.relay.bench.Report.summary;
import static io.relay.bench.Results.bestWhere;
import static io.relay.bench.Results.best;
import static io.relay.bench.Results.fmt;
import static io.relay.bench.Results.list;
import static io.relay.bench.Results.num;
import static io.relay.bench.Results.obj;
import static io.relay.bench.Results.str;

import java.awt.BasicStroke;
import java.io.File;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogarithmicAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/** The tables, comparisons and charts that several sections of the {@link Report} page share. */
final class Tables {
  private Tables() {}

  /** W5's table: one row per run. */
  static void idleTable(List<Map<String, Object>> r) {
    md.append("| server | connections open | connects/s | connect p50 / p99 ms | heap per connection KB | RSS per connection KB | of which heap pages / compiled code and classes / other KB | heap MB | RSS MB |\n|---|---|---|---|---|---|---|---|---|\n");
    for (Map<String, Object> x : r) {
      md.append(String.format(Locale.ROOT, "| %s | %s / %s | %s | %s / %s | %s | %s | %s / %s / %s | %s | %s |%n", x.get("label"), fmt(x.get("openConnections")), fmt(x.get("connections")),
          fmt(x.get("connectsPerS")), fmt(x.get("connectP50Ms")), fmt(x.get("connectP99Ms")), fmt(x.get("heapPerConnectionKB")), fmt(x.get("rssPerConnectionKB")),
          fmt(x.get("heapPagesPerConnectionKB")), fmt(x.get("compiledPerConnectionKB")), fmt(x.get("otherNativePerConnectionKB")),
          fmt(x.get("serverHeapMB")), fmt(x.get("serverRssMB"))));
    }
  }

  /** W5's RSS against connections, one series per run. */
  static XYSeriesCollection idleMemory(List<Map<String, Object>> r) {
    XYSeriesCollection mem = new XYSeriesCollection();
    Map<String, Integer> runs = new LinkedHashMap<>();
    for (Map<String, Object> x : r) {
      String label = str(x.get("label"));
      XYSeries s = new XYSeries(label + " RSS run " + runs.merge(label, 1, Integer::sum), false, true);
      for (Object o : list(x.get("memorySeries"))) {
        Map<String, Object> p = obj(o);
        s.add(num(p.get("connections")), num(p.get("rssMB")));
      }
      mem.addSeries(s);
    }
    return mem;
  }

  static void latencyTable(List<Map<String, Object>> r) {
    md.append("| server | offered msg/s | delivered msg/s | delivered MB/s | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | lost | reordered | max lost per reader | server CPU % | server RSS MB | generator CPU % | connect p50 ms |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Map<String, Object> x : r) {
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n", x.get("label"), fmt(x.get("offeredMsgPerS")), fmt(x.get("deliveredMsgPerS")),
          fmt(x.get("deliveredMBps")), fmt(x.get("p50Ms")), fmt(x.get("p90Ms")), fmt(x.get("p99Ms")), fmt(x.get("p999Ms")), fmt(x.get("maxMs")), fmt(x.get("lostTotal")),
          fmt(x.get("reorderedTotal")), fmt(x.get("lostMaxPerReader")), fmt(x.get("serverCpuPct")), fmt(x.get("serverRssMB")), fmt(x.get("generatorCpuPct")), fmt(x.get("connectP50Ms"))));
    }
    md.append("\n");
  }

  /** Each relay configuration's best run (median would need more runs) against the best nchan configuration's best. */
  static void ratio(List<Map<String, Object>> r, String key, boolean higherBetter, double goal, String measure) {
    double nchan = best(r, "nchan", key, higherBetter);
    Set<String> relays = new LinkedHashSet<>();
    for (Map<String, Object> x : r) if (str(x.get("label")).startsWith("relay")) relays.add(str(x.get("label")));
    String goalText = (higherBetter ? ">= " : "<= ") + goal;
    for (String label : relays) {
      double relay = bestWhere(r, label::equals, key, higherBetter);
      double worstRelay = bestWhere(r, label::equals, key, !higherBetter);
      double q = relay / nchan;
      boolean ok = higherBetter ? q >= goal : q <= goal;
      String ratio = ratioText(q, goal, higherBetter);
      md.append(String.format(Locale.ROOT, "%s relay / best nchan (goal %s) (%s): best runs %.3g / %.3g = **%s** (%s's worst run: %.3g), goal %s.%n%n",
          measure, goalText, label, relay, nchan, ratio, label, worstRelay, ok ? "**met**" : "**not met**"));
      summary.append(String.format(Locale.ROOT, "| %s | %s | %s | nchan %s | %s | %s | %s |%n", measure, label, fmt(relay), fmt(nchan), ratio, goalText, ok ? "met" : "**not met**"));
    }
  }

  /** {@code q} to two decimals, or three where two would round a ratio that misses {@code goal} onto it. */
  static String ratioText(double q, double goal, boolean higherBetter) {
    String two = String.format(Locale.ROOT, "%.2f", q);
    boolean ok = higherBetter ? q >= goal : q <= goal;
    return !ok && Double.parseDouble(two) == goal ? String.format(Locale.ROOT, "%.3f", q) : two;
  }

  static void chart(XYSeriesCollection data, String title, String x, String y, File file, boolean logY) throws Exception {
    JFreeChart chart = ChartFactory.createXYLineChart(title, x, y, data, PlotOrientation.VERTICAL, true, false, false);
    XYPlot plot = chart.getXYPlot();
    if (logY) {
      LogarithmicAxis axis = new LogarithmicAxis(y);
      axis.setStrictValuesFlag(false);
      axis.setExpTickLabelsFlag(false);
      plot.setRangeAxis(axis);
    }
    XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
    for (int i = 0; i < data.getSeriesCount(); i++) renderer.setSeriesStroke(i, new BasicStroke(2f));
    plot.setRenderer(renderer);
    ChartUtils.saveChartAsPNG(file, chart, 900, 500);
  }
}
