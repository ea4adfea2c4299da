package io.relay.harness;

import java.time.Duration;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One scenario run: its name and proxy, the cluster's claim and eviction counters, and the report
 * entry written when it ends, passed or not.
 */
public final class Scenario {
  /** Frames in flight when a server closes a topic reach clients within this. */
  public static final Duration IN_FLIGHT_ALLOWANCE = Duration.ofMillis(250);

  private final HarnessConfig config;
  private final String name;
  private final String proxy;
  private final Map<String, Object> extra = new HashMap<>();
  /** Counter readings by node process: a node started again at an address counts from zero. */
  private final Map<NodeProcess, double[]> atStart = new IdentityHashMap<>();
  private final Map<NodeProcess, double[]> latest = new IdentityHashMap<>();
  private long convergenceMs = -1;
  private Delivery.Summary delivery;

  public Scenario(HarnessConfig config, String name, String proxy) {
    this.config = config;
    this.name = name;
    this.proxy = proxy;
  }

  /** Reads the claim and eviction counters of {@code nodes} before the event. */
  public void countersBefore(List<NodeProcess> nodes) {
    for (NodeProcess node : nodes) {
      atStart.put(node, readCounters(node));
    }
  }

  /**
   * Reads the counters of {@code nodes} now: the scenario's claims and evictions are what each
   * node's counters grew by between {@link #countersBefore} (or its start) and its last reading. A
   * node about to be stopped is read first, or its counts go with it.
   */
  public void counters(List<NodeProcess> nodes) {
    for (NodeProcess node : nodes) {
      latest.put(node, readCounters(node));
    }
  }

  private static double[] readCounters(NodeProcess node) {
    return new double[] {node.metric("relay_claims_total"), node.metric("relay_evictions_total")};
  }

  private long grown(int counter) {
    double sum = 0;
    for (Map.Entry<NodeProcess, double[]> reading : latest.entrySet()) {
      sum += reading.getValue()[counter] - atStart.getOrDefault(reading.getKey(), new double[2])[counter];
    }
    return Math.max(0, Math.round(sum));
  }

  public long claims() {
    return grown(0);
  }

  public long evictions() {
    return grown(1);
  }

  public void convergence(long millis) {
    this.convergenceMs = millis;
  }

  public void delivery(Delivery.Summary summary) {
    this.delivery = summary;
    extra.put("frames_sent", summary.framesSent());
    extra.put("frames_owed", summary.framesOwed());
    extra.put("foreign", summary.foreign());
    extra.put("duplicates", summary.duplicates());
    extra.put("out_of_order", summary.outOfOrder());
    extra.put("reconnects", summary.windowsMillis().size());
    extra.put("longest_in_flight_ms", summary.longestInFlightMillis());
    extra.put("longest_tail_before_close_ms", summary.longestTailBeforeCloseMillis());
  }

  public void put(String key, Object value) {
    extra.put(key, value);
  }

  /** Writes this scenario's report entry. */
  public void report(boolean passed) {
    Delivery.Summary d = delivery;
    ScenarioReport.record(
        config,
        new ScenarioReport.Result(
            name,
            passed,
            proxy,
            convergenceMs,
            d == null ? 0 : d.percentile(50),
            d == null ? 0 : d.percentile(99),
            d == null ? 0 : d.percentile(100),
            d == null ? 0 : d.framesLostOutsideWindow(),
            claims(),
            evictions(),
            extra));
  }
}
