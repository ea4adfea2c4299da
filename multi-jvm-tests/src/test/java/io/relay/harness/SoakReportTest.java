package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SoakReportTest {
  private static final long MINUTE = 60_000_000_000L;
  private static final double MIB = 1 << 20;

  @Test
  void heapTroughsAreTheLowestSamplesOfEachQuarterPastTheWarmUp() {
    SoakReport report = new SoakReport(Duration.ofMinutes(120), Duration.ofMinutes(30), Duration.ofMinutes(10), "churn");
    double[] heap = {50, 30, 40, 26, 35, 28, 38, 30, 36, 31, 39, 33};
    for (int i = 0; i < heap.length; i++) {
      report.sample((i + 1) * 10 * MINUTE, "node1", 0, ClassHistogram.parse(" 1: 1 16 [B\n"), heap[i] * MIB, 300 * MIB, 40, 23, 20);
    }
    report.sample(100 * MINUTE, "node3", 95 * MINUTE, ClassHistogram.parse(" 1: 1 16 [B\n"), 20 * MIB, 300 * MIB, 40, 23, 20);
    Map<String, Map<Integer, Double>> troughs = report.troughs();
    assertEquals(Map.of("node1 (up since minute 0.0)", Map.of(0, 30.0, 1, 26.0, 2, 28.0, 3, 31.0)), troughs,
        "node1's lowest samples at minutes 20-29, 30-59, 60-89 and 90-120 (its first 20 minutes are warm-up); node3 has one sample");
    assertTrue(report.markdown().contains("| node1 (up since minute 0.0) | 30.0 | 26.0 | 28.0 | 31.0 |"), report.markdown());
  }
}
