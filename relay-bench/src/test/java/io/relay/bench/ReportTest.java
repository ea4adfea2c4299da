package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The page a run writes: results against nchan and the goals first, the notes linked, not copied. */
class ReportTest {
  @TempDir Path dir;

  @Test
  void thePageOpensWithTheResultsAgainstNchanAndLinksTheNotes() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Path docs = Files.createDirectories(dir.resolve("docs"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    Files.write(out.resolve("results.jsonl"), List.of(
        row("W1", "relay", 1.0, 26, 103), row("W1", "nchan-2w", 0.5, 15, 103),
        row("W3", "relay", 3.5, 108, 1100), row("W3", "nchan-1w", 1.6, 96, 1640)));
    Path notes = Files.writeString(docs.resolve("benchmark-notes.md"), "## Where the relay's time goes\n\nA long profile.\n");

    Report.main(new String[] {out.toString(), docs.resolve("benchmarks.md").toString(), notes.toString()});

    String page = Files.readString(docs.resolve("benchmarks.md"));
    int results = page.indexOf("## Against nchan and the goals");
    assertTrue(results > 0 && results < page.indexOf("## W1"), "the results against nchan come before the workloads' tables:\n" + page);
    assertTrue(page.contains("| W1 p99 ms | relay | 1 | nchan 0.500 | 2.00 | <= 1.2 | **not met** |"), page);
    assertTrue(page.contains("| W1 server CPU % per delivered MB/s | relay |"), page);
    assertTrue(page.contains("| W3 delivered MB/s | relay | 1100 | nchan 1640 | 0.67 | >= 1.2 | **not met** |"), page);
    assertTrue(page.contains("| W3 delivered MB/s | relay | 1100 | loopback TCP 4000 | 28 % | >= 40 % | **not met** |"), page);
    assertTrue(page.contains("| W3 server CPU % per delivered MB/s | relay | 0.0982 | nchan 0.0585 | 1.68 | <= 1.0 | **not met** |"), page);
    assertTrue(page.contains("[benchmark-notes.md](benchmark-notes.md)"), "the notes are linked:\n" + page);
    assertFalse(page.contains("A long profile."), "the notes are not copied into the page");
    assertEquals(1, page.split("## Against nchan", -1).length - 1);
  }

  @Test
  void aRatioThatMissesItsGoalIsNotRoundedOntoIt() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    Files.write(out.resolve("results.jsonl"), List.of(row("W3", "relay", 2, 77, 1870), row("W3", "nchan-1w", 2, 99, 1559)));
    Path doc = dir.resolve("benchmarks.md");

    Report.main(new String[] {out.toString(), doc.toString()});

    String page = Files.readString(doc);
    assertTrue(page.contains("| W3 delivered MB/s | relay | 1870 | nchan 1559 | 1.199 | >= 1.2 | **not met** |"), page);
    assertTrue(page.contains("= **1.199** (relay's worst run"), page);
  }

  @Test
  void theReadmesResultsTableIsWrittenFromTheSameRunBetweenItsMarkersAndNothingElseChanges() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Path docs = Files.createDirectories(dir.resolve("docs"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    Files.write(out.resolve("results.jsonl"), List.of(
        row("W1", "relay", 1.0, 26, 103), row("W1", "nchan-2w", 0.5, 15, 103),
        row("W3", "relay", 3.5, 108, 1100), row("W3", "nchan-1w", 1.6, 96, 1640)));
    Path readme = Files.writeString(dir.resolve("README.md"),
        "# Relay\n\nBefore.\n\n" + ReadmeResults.START + "\nan old table\n" + ReadmeResults.END + "\n\nAfter.\n");

    Report.main(new String[] {out.toString(), docs.resolve("benchmarks.md").toString(), "", readme.toString()});

    String text = Files.readString(readme);
    assertTrue(text.startsWith("# Relay\n\nBefore.\n\n" + ReadmeResults.START + "\n"), text);
    assertTrue(text.endsWith(ReadmeResults.END + "\n\nAfter.\n"), text);
    assertFalse(text.contains("an old table"), text);
    assertTrue(text.contains("| W1 p99 ms | relay | 1 | nchan 0.500 | 2.00 | <= 1.2 | **not met** |"), text);
    assertTrue(text.contains("| W3 delivered MB/s | relay | 1100 | nchan 1640 | 0.67 | >= 1.2 | **not met** |"), text);
    assertFalse(text.contains("loopback TCP"), "only rows against nchan or a goal: " + text);
    assertTrue(text.contains("[docs/benchmarks.md](docs/benchmarks.md)"), "the page is linked: " + text);
  }

  @Test
  void wssRunsAreComparedWithNginxOverTlsAndNotMixedIntoThePlainOnes() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    Files.write(out.resolve("results.jsonl"), List.of(
        row("W1", "relay", 1.0, 26, 103), row("W1", "nchan-2w", 0.5, 15, 103),
        row("W1", "relay-tls", 30, 117, 103, "wss"), row("W1", "nchan-2w-tls", 4, 31, 103, "wss"),
        row("W3", "relay-tls", 30, 100, 500, "wss"), row("W3", "nchan-1w-tls", 4, 100, 600, "wss")));
    Path doc = dir.resolve("benchmarks.md");

    Report.main(new String[] {out.toString(), doc.toString()});

    String page = Files.readString(doc);
    assertTrue(page.contains("| W1 p99 ms | relay | 1 | nchan 0.500 | 2.00 | <= 1.2 | **not met** |"), "plain W1 against plain nchan:\n" + page);
    assertFalse(page.contains("| W1 p99 ms | relay-tls"), "no wss run among the plain ones:\n" + page);
    assertTrue(page.contains("| wss W1 p99 ms | relay-tls | 30 | nchan 4 | 7.50 | <= 1.5 | **not met** |"), page);
    assertTrue(page.contains("| wss W3 delivered MB/s | relay-tls | 500 | nchan 600 | 0.83 | >= 1.2 | **not met** |"), page);
  }

  @Test
  void connectStormsAreJudgedAgainstTheirGoalsBelowSaturationOnly() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    Files.write(out.resolve("results.jsonl"), List.of(row("W1", "relay", 1.0, 26, 103), row("W1", "nchan-2w", 0.5, 15, 103)));
    Files.write(out.resolve("admission.jsonl"), List.of(
        storm("relay-1-node", 1, 0, 4000, 30), storm("relay-1-node", 1, 0, 3500, 35), storm("relay-1-node", 1, 1000, 1000, 20),
        storm("relay-3-nodes-nginx", 3, 0, 1200, 150), storm("relay-3-nodes-nginx", 3, 500, 500, 120),
        storm("relay-3-nodes-nginx", 3, 2000, 1500, 900)));
    Path doc = dir.resolve("benchmarks.md");

    Report.main(new String[] {out.toString(), doc.toString()});

    String page = Files.readString(doc);
    assertTrue(page.contains("| W6 admitted/s, closed loop | relay-1-node | 4000 | goal 3000 | 1.33 | >= 1.0 | met |"), page);
    assertTrue(page.contains("| W6 admission p99 ms below saturation (worst storm at 1000 /s) | relay-1-node | 20 | goal 50 | 0.40 | <= 1.0 | met |"), page);
    assertTrue(page.contains("| W6 admitted/s, closed loop | relay-3-nodes-nginx | 1200 | goal 1000 | 1.20 | >= 1.0 | met |"), page);
    assertTrue(
        page.contains("| W6 admission p99 ms below saturation (worst storm at 500 /s) | relay-3-nodes-nginx | 120 | goal 100 | 1.20 | <= 1.0 | **not met** |"),
        "offered 2,000 a second is beyond three nodes' 1,200 and is not judged:\n" + page);
    assertTrue(page.contains("| relay-1-node | 0 | 2 | 3500-4000 |"), "one row per configuration and rate, the range over its storms:\n" + page);
  }

  @Test
  void w4IsComparedByTheHighestStepPassedAndByCpuPerDeliveredByteThere() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    // both pass the ladder's top; the MB/s each delivered there differ only by the generator's timing
    Files.write(out.resolve("results.jsonl"), List.of(ladder("relay", 1639.2, 74), ladder("nchan-1w", 1640.6, 96)));
    Path doc = dir.resolve("benchmarks.md");

    Report.main(new String[] {out.toString(), doc.toString()});

    String page = Files.readString(doc);
    assertTrue(page.contains("| W4 highest passing rate /s per topic | relay | 400 | nchan 400 | 1.00 | >= 1.0 | met |"), page);
    assertTrue(page.contains("| W4 server CPU % per delivered MB/s at the highest passing step | relay |"), page);
    assertTrue(page.contains("| 74 | 60 | 2 | 1.50 | true |"), "the relay's last step: its loops late twice, the generator's sends 1.5 ms at most\n" + page);
    assertTrue(page.contains("| 96 | 60 | - | 1.50 | true |"), "nchan's: no loop delays to read\n" + page);
  }

  @Test
  void theIndependentGeneratorsFiguresStandUnderEachWorkloadAndBesideTheJavaGeneratorsRatios() throws Exception {
    Path out = Files.createDirectories(dir.resolve("out"));
    Files.writeString(out.resolve("iperf3.json"), "{\"end\":{\"sum_received\":{\"bits_per_second\":3.2e10}}}");
    Files.write(out.resolve("results.jsonl"), List.of(row("W1", "relay", 1.0, 26, 103), row("W1", "nchan-2w", 0.5, 15, 103)));
    Files.write(out.resolve("results-node.jsonl"), List.of(
        row("W1", "relay", 0.9, 20, 100), row("W1", "nchan-1w", 0.6, 12, 100), row("W1", "nchan-2w", 1.2, 14, 100),
        row("W3", "relay", 2, 90, 400), row("W3", "nchan-1w", 2, 95, 440)));
    Path doc = dir.resolve("benchmarks.md");

    Report.main(new String[] {out.toString(), doc.toString()});

    String page = Files.readString(doc);
    assertTrue(page.contains("| W1 p99 ms | java | 1 | 0.500 | 2.00 |"), "the Java generator's ratio:\n" + page);
    assertTrue(page.contains("| W1 p99 ms | node-ws | 0.900 | 0.600 | 1.50 |"), "the Node generator's, against its best nchan run:\n" + page);
    assertTrue(page.contains("| W3 delivered MB/s | node-ws | 400 | 440 | 0.91 |"), page);
    assertFalse(page.contains("| W3 delivered MB/s | java"), "no ratio for a workload a generator did not run:\n" + page);
    int w1 = page.indexOf("## W1");
    int nodeTable = page.indexOf("As measured by the independent generator", w1);
    assertTrue(w1 > 0 && nodeTable > w1 && nodeTable < page.indexOf("## W3"), "the Node generator's W1 table is in W1's section:\n" + page);
    assertTrue(page.contains("## W3 one stream"), "W3's section, run by the Node generator alone:\n" + page);
  }

  /**
   * A W4 result that passed the steps up to 400/s per topic, the last at {@code mbps} and {@code cpu}
   * % of a core; the relay's loops ran late twice in each step.
   */
  private static String ladder(String label, double mbps, double cpu) {
    String step =
        "{\"rate\":%s,\"deliveredMBps\":%s,\"p99Ms\":3,\"serverCpuPct\":%s,\"generatorCpuPct\":60,\"pass\":true,"
            + "\"offeredMsgPerS\":1,\"deliveryRatio\":1,\"p50Ms\":0.3,\"p999Ms\":9,\"maxMs\":20,\"generatorSendLateMaxMs\":1.5,"
            + "\"serverLoopDelaysOver50ms\":" + (label.startsWith("relay") ? 2 : -1) + "}";
    return String.format(java.util.Locale.ROOT,
        "{\"workload\":\"W4\",\"transport\":\"ws\",\"label\":\"%s\",\"highestPassingRate\":400.0,\"highestPassingMBps\":%s,\"steps\":[%s,%s]}",
        label, mbps, String.format(java.util.Locale.ROOT, step, 300.0, mbps * 3 / 4, cpu * 3 / 4),
        String.format(java.util.Locale.ROOT, step, 400.0, mbps, cpu));
  }

  private static String storm(String label, int nodes, double offered, double admitted, double p99) {
    return String.format(java.util.Locale.ROOT,
        "{\"workload\":\"W6\",\"transport\":\"ws\",\"label\":\"%s\",\"accessUrls\":%d,\"offeredPerS\":%s,\"admittedPerS\":%s,"
            + "\"admissionP99Ms\":%s,\"admissionP50Ms\":1,\"postP50Ms\":1,\"postP99Ms\":2,\"upgradeP50Ms\":1,\"upgradeP99Ms\":2,"
            + "\"serverCpuMsPerAdmission\":0.3,\"failures\":{}}",
        label, nodes, offered, admitted, p99);
  }

  private static String row(String workload, String label, double p99, double cpu, double mbps) {
    return row(workload, label, p99, cpu, mbps, "ws");
  }

  private static String row(String workload, String label, double p99, double cpu, double mbps, String transport) {
    return String.format(java.util.Locale.ROOT,
        "{\"workload\":\"%s\",\"transport\":\"%s\",\"label\":\"%s\",\"p99Ms\":%s,\"serverCpuPct\":%s,\"deliveredMBps\":%s,\"offeredMsgPerS\":1,\"deliveredMsgPerS\":1,"
            + "\"p50Ms\":0.2,\"p90Ms\":0.3,\"p999Ms\":2,\"maxMs\":3,\"lostTotal\":0,\"reorderedTotal\":0,\"lostMaxPerReader\":0,\"serverRssMB\":1,"
            + "\"generatorCpuPct\":1,\"connectP50Ms\":1}",
        workload, transport, label, p99, cpu, mbps);
  }
}
