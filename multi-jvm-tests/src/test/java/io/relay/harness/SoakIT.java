package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.bench.Churn;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Hours of churn, or minutes of it in every build: three nodes behind nginx, and relay-bench's
 * {@link Churn} through the proxy: sessions of one writer and two readers starting at a steady
 * rate and ending normally, readers living a few seconds each and closing normally, abruptly or
 * after stalling as slow readers, a booking denied every few minutes, and a node killed and
 * restarted every half hour (once, halfway, in a shorter run): always the same node, so that the
 * two others run the whole length and their samples span the second half without a restart. Every frame a reader receives is
 * checked byte for byte; every node's heap after a full GC, resident memory, descriptors and
 * threads are sampled as it goes, with the classes of its live objects ({@link SoakReport}).
 *
 * <p>{@code -Drelay.soak.minutes} sets the length (2 in {@code mvn -B verify}); {@code
 * -Drelay.soak.record=<file>} writes the report there too ({@code multi-jvm-tests/soak} runs two
 * hours and records docs/soak.md). The report's slopes are figures, not assertions: what this test
 * asserts is what a participant sees (no frame of another session, corrupt, missing from a reader
 * that kept reading, or out of order) and that no node counted a buffer fault or logged a secret.
 */
class SoakIT {
  private static final Duration MINUTES = Duration.ofMinutes(Long.getLong("relay.soak.minutes", 2));
  private static final boolean LONG = MINUTES.compareTo(Duration.ofMinutes(30)) >= 0;
  private static final Duration KILL_EVERY = min(Duration.ofMinutes(30), MINUTES.dividedBy(2));
  private static final Duration SAMPLE_EVERY = min(Duration.ofMinutes(10), MINUTES.dividedBy(6));

  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @Test
  void sessionsChurnForHoursAndNoReaderGetsAFrameItShouldNot() throws Exception {
    String[] workload = {
      "--topics", "20", "--readers", "2", "--rate", "20", "--min-bytes", "1024", "--max-bytes", "16384",
      "--min-life-ms", "2000", "--max-life-ms", "20000", "--abrupt", "0.4", "--slow", "0.2", "--slow-ms", "5000",
      "--session-seconds", LONG ? "60" : "20", "--deny-every", LONG ? "180" : "30", "--deny-for", "2"
    };
    SoakReport report = new SoakReport(MINUTES, KILL_EVERY, SAMPLE_EVERY, String.join(" ", workload));
    List<String> faults = new ArrayList<>();
    Map<String, Object> result;
    Thread churning = null;
    try (Proxy proxy = Proxy.nginx(config);
        RelayCluster cluster = new RelayCluster(config, proxy.relayUrl(), Map.of()).start(3)) {
      proxy.start(cluster.running());
      Map<NodeProcess, Long> startedAt = new HashMap<>();
      String killed = cluster.running().get(2).name;
      long start = System.nanoTime();
      cluster.running().forEach(node -> startedAt.put(node, 0L));
      List<String> args = new ArrayList<>(List.of(workload));
      args.addAll(List.of("--access", proxy.accessUrl(), "--secret", Tokens.SECRET, "--audience", Tokens.AUDIENCE, "--seconds", Long.toString(MINUTES.toSeconds())));
      Churn churn = CommandLine.populateCommand(new Churn(), args.toArray(String[]::new));
      FutureTask<Map<String, Object>> running = new FutureTask<>(churn::churn);
      churning = new Thread(running, "churn");
      churning.start();

      long nextSample = 0;
      long nextKill = KILL_EVERY.toNanos();
      int kills = 0;
      long end = MINUTES.toNanos();
      while (true) {
        long now = System.nanoTime() - start;
        if (now >= nextSample) {
          for (NodeProcess node : cluster.running()) {
            ClassHistogram live = ClassHistogram.of(node); // after the full collection it runs, the heap in use is what is live
            report.sample(now, node.name, startedAt.get(node), live, node.metric("jvm_memory_used_bytes{area=\"heap\"}"),
                node.metric("process_resident_memory_bytes"), node.metric("process_open_fds"), node.metric("jvm_threads_current"), node.metric("relay_topics"));
          }
          nextSample += SAMPLE_EVERY.toNanos();
        } else if (now >= nextKill && now < end - SAMPLE_EVERY.toNanos()) {
          NodeProcess victim = cluster.running().stream().filter(node -> node.name.equals(killed)).findFirst().orElseThrow();
          faults.addAll(faults(victim));
          cluster.crash(victim);
          proxy.reload(cluster.running());
          victim.process().awaitExit(Duration.ofSeconds(30));
          Await.until("the survivors remove the killed " + victim, Duration.ofSeconds(60),
              () -> cluster.running().stream().noneMatch(n -> n.members().containsKey(victim.address())));
          NodeProcess back = cluster.restart(victim);
          startedAt.put(back, System.nanoTime() - start);
          proxy.reload(cluster.running());
          report.killed(now, victim.name);
          kills++;
          nextKill += KILL_EVERY.toNanos();
        } else if (now >= end) {
          break;
        } else {
          long next = Math.min(nextSample, Math.min(nextKill, end));
          TimeUnit.NANOSECONDS.sleep(Math.max(1, next - now)); // the schedule of samples and kills
        }
      }
      assertTrue(kills > 0, "a node was killed and started again during the soak (a sampling round can push the kill past its window)");
      result = running.get(2, TimeUnit.MINUTES);
      for (NodeProcess node : cluster.running()) {
        faults.addAll(faults(node));
      }
      report.result(result);
      LogHygiene.assertClean(cluster.logs());
    } finally {
      if (churning != null) {
        churning.interrupt(); // a soak that failed stops its clients; one that ended has none left
        churning.join(TimeUnit.MINUTES.toMillis(1));
      }
      report.write(config.reportDir().resolve("soak.md"));
      String record = System.getProperty("relay.soak.record");
      if (record != null && !record.isBlank()) {
        report.write(Path.of(record));
      }
    }
    assertTrue(((Number) result.get("framesReceived")).longValue() > 0, "readers received frames: " + result);
    assertTrue(((Number) result.get("sessions")).longValue() > 20, "sessions ended and new ones started: " + result);
    assertTrue(((Number) result.get("closedByDeny")).longValue() > 0, "a deny closed connections: " + result);
    assertEveryFrameIntact(result);
    assertEquals(List.of(), faults, "buffer accounting faults counted by nodes");
  }

  /** What a churn's readers saw: no frame of another session, none corrupt, missing or out of order. */
  static void assertEveryFrameIntact(Map<String, Object> result) {
    assertEquals(0, ((Number) result.get("foreign")).longValue(), "frames of another session: " + result);
    assertEquals(0, ((Number) result.get("corrupt")).longValue(), "bytes that are no writer's frame: " + result);
    assertEquals(0, ((Number) result.get("gaps")).longValue(), "frames missing from a reader that kept reading: " + result);
    assertEquals(0, ((Number) result.get("reordered")).longValue(), "frames out of order: " + result);
  }

  /** The node's buffer accounting faults, named, if it counted any or could not say. */
  private static List<String> faults(NodeProcess node) {
    double faults = node.metric("relay_buffer_faults_total");
    return faults == 0 ? List.of() : List.of(node + ": " + faults);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
