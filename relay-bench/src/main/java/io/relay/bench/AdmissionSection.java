package io.relay.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The connect storm's section of docs/benchmarks.md (W6, from {@code admission.jsonl}) and its rows
 * in the page's summary, written into {@link Report}'s page like its other sections.
 */
final class AdmissionSection {
  private AdmissionSection() {}

  /**
   * W6: one row per configuration and offered rate, the range over its storms; in the summary, each
   * configuration's closed-loop rate against its goal and its worst p99 at the offered rates below
   * its saturation (its fastest closed-loop storm) against its goal.
   */
  static void append(List<Map<String, Object>> storms, List<Map<String, Object>> w5) {
    Report.md.append("## W6 admission (connect storm: topics of 3 participants, each a fresh POST for a code and a fresh upgrade)\n\n"
        + "`relay-bench/run-admission`: one node, and three nodes behind nginx on the same 2 cores (access requests spread over the "
        + "nodes, upgrades through nginx, which hashes the topic onto a node); warm-up storms, then the same participants "
        + "coming back, each storm started once the server is quiet again (how many, and how many at a time: \"This run\", below). "
        + "Offered 0 is the closed loop (a fixed number of participants in flight, as fast as the server admits them); otherwise participants are started at that rate and each latency counts "
        + "from when its participant was due. Server CPU is every node's and nginx's.\n\n");
    Report.md.append("| server | offered /s | storms | admitted/s | POST p50 / p99 ms | upgrade p50 / p99 ms | admission p50 / p99 ms | "
        + "server CPU ms per admission | failed |\n|---|---|---|---|---|---|---|---|---|\n");
    Map<String, List<Map<String, Object>>> groups = new LinkedHashMap<>();
    for (Map<String, Object> x : storms) {
      groups.computeIfAbsent(Results.str(x.get("label")) + " " + Results.fmt(x.get("offeredPerS")), k -> new ArrayList<>()).add(x);
    }
    for (List<Map<String, Object>> g : groups.values()) {
      long failed = 0;
      for (Map<String, Object> x : g) {
        for (Object n : Results.obj(x.get("failures")).values()) failed += (long) Results.num(n);
      }
      Report.md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %s / %s | %s / %s | %s / %s | %s | %d |%n", g.get(0).get("label"), Results.fmt(g.get(0).get("offeredPerS")),
          g.size(), range(g, "admittedPerS"), range(g, "postP50Ms"), range(g, "postP99Ms"), range(g, "upgradeP50Ms"), range(g, "upgradeP99Ms"),
          range(g, "admissionP50Ms"), range(g, "admissionP99Ms"), range(g, "serverCpuMsPerAdmission"), failed));
    }
    Set<String> labels = new LinkedHashSet<>();
    for (Map<String, Object> x : storms) labels.add(Results.str(x.get("label")));
    for (String label : labels) {
      List<Map<String, Object>> closed = new ArrayList<>();
      List<Map<String, Object>> paced = new ArrayList<>();
      for (Map<String, Object> x : storms) {
        if (label.equals(Results.str(x.get("label")))) (Results.num(x.get("offeredPerS")) == 0 ? closed : paced).add(x);
      }
      if (closed.isEmpty()) continue;
      boolean oneNode = Results.num(closed.get(0).get("accessUrls")) == 1;
      double rateGoal = oneNode ? 3000 : 1000;
      double p99Goal = oneNode ? 50 : 100;
      double best = Results.bestWhere(closed, label::equals, "admittedPerS", true);
      Report.summary.append(String.format(Locale.ROOT, "| W6 admitted/s, closed loop | %s | %s | goal %.0f | %.2f | >= 1.0 | %s |%n",
          label, Results.fmt(best), rateGoal, best / rateGoal, best >= rateGoal ? "met" : "**not met**"));
      double worstP99 = -1;
      Set<String> rates = new LinkedHashSet<>();
      for (Map<String, Object> x : paced) {
        if (Results.num(x.get("offeredPerS")) < best) {
          worstP99 = Math.max(worstP99, Results.num(x.get("admissionP99Ms")));
          rates.add(Results.fmt(x.get("offeredPerS")));
        }
      }
      if (worstP99 >= 0) {
        Report.summary.append(String.format(Locale.ROOT, "| W6 admission p99 ms below saturation (worst storm at %s /s) | %s | %s | goal %.0f | %.2f | <= 1.0 | %s |%n",
            String.join(", ", rates), label, Results.fmt(worstP99), p99Goal, worstP99 / p99Goal, worstP99 <= p99Goal ? "met" : "**not met**"));
      }
    }
    List<Map<String, Object>> nchan = new ArrayList<>();
    for (Map<String, Object> x : w5) if (Results.str(x.get("label")).startsWith("nchan")) nchan.add(x);
    Report.md.append(nchan.isEmpty() ? "\n" : String.format(Locale.ROOT, "%nFor scale: nchan opens %s WebSocket connections a second in W5 (this run), with no access step.%n%n",
        range(nchan, "connectsPerS")));
  }

  /** The range of {@code key} over {@code rows}: "min-max", or one figure when they agree. */
  static String range(List<Map<String, Object>> rows, String key) {
    String low = Results.fmt(Results.bestWhere(rows, label -> true, key, false));
    String high = Results.fmt(Results.bestWhere(rows, label -> true, key, true));
    return low.equals(high) ? low : low + "-" + high;
  }
}
