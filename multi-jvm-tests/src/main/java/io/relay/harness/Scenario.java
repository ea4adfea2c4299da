package io.relay.harness;

import java.time.Duration;
import java.util.HashMap;
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
  private final Map<String, double[]> atStart = new HashMap<>();
  private double claims;
  private double evictions;
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
      atStart.put(node.address(), new double[] {node.metric("relay_claims_total"), node.metric("relay_evictions_total")});
    }
  }

  /**
   * Adds up, over {@code nodes}, what their counters grew by since {@link #countersBefore}
   * (everything, for nodes started since); nodes that are gone take their counts with them.
   */
  public void countersAfter(List<NodeProcess> nodes) {
    claims = 0;
    evictions = 0;
    for (NodeProcess node : nodes) {
      double[] start = atStart.getOrDefault(node.address(), new double[2]);
      claims += node.metric("relay_claims_total") - start[0];
      evictions += node.metric("relay_evictions_total") - start[1];
    }
  }

  public long claims() {
    return Math.max(0, Math.round(claims));
  }

  public long evictions() {
    return Math.max(0, Math.round(evictions));
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
