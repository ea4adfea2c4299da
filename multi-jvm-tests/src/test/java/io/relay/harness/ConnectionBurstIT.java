package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A burst of WebSocket connections at one node of 3, opened as fast as the node takes them: no
 * node ever takes another for unreachable, during the burst or for {@link #OBSERVE_AFTER} after
 * it (each node's own view, sampled from its management port, and its log), and every member
 * stays Up. Each upgrade redeems a code (a claim sent to the node that issued it, two times in
 * three another node), so the burst loads the cluster's messaging as well as the node's sockets.
 * A second wave, as many upgrades with codes no node issued but naming the nodes as their issuers,
 * follows at once: each is answered 401 after the named node has looked for it in its replica
 * (two times in three another node, again a message each way).
 *
 * <p>In {@code mvn -B verify} it opens 1,000 connections; {@code -Dattack.scale=full} opens 3,000
 * (docs/scenarios.md) and also prints what it measured. The figures go to the scenario report;
 * none is asserted.
 */
class ConnectionBurstIT {
  private static final boolean FULL = "full".equals(System.getProperty("attack.scale"));
  private static final int CONNECTIONS = FULL ? 3_000 : 1_000;
  private static final int PER_TOPIC = 10;
  /** Upgrades under way at once: below the node's admissions in flight (1,024), so none is refused for that. */
  private static final int CONCURRENCY = 64;
  private static final Duration SAMPLE_PERIOD = Duration.ofMillis(200);
  /** The failure detector takes a node for unreachable after 3 s without heartbeats; watch well past that. */
  private static final Duration OBSERVE_AFTER = Duration.ofSeconds(10);
  /** Codes are fetched before the burst; they must outlive fetching them all. */
  private static final Map<String, String> ENV = Map.of("RELAY_CODE_TTL", "5m");
  /** Codes' URIs are not followed (the burst goes to one node's relay port directly). */
  private static final String UNUSED_RELAY_URL = "ws://127.0.0.1:3001";

  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @Test
  void aConnectionBurstAtOneNodeMakesNoNodeUnreachable() throws IOException {
    Scenario scenario = new Scenario(config, "connection-burst-" + CONNECTIONS, "none");
    boolean passed = false;
    try (RelayCluster cluster = new RelayCluster(config, UNUSED_RELAY_URL, ENV).start(3);
        ConnectionBurst burst = new ConnectionBurst()) {
      List<NodeProcess> nodes = cluster.running();
      NodeProcess target = nodes.get(1);
      long fetching = System.nanoTime();
      List<String> codes =
          ConnectionBurst.codes(
              nodes.stream().map(n -> "http://127.0.0.1:" + n.accessPort).toList(), "burst", CONNECTIONS, PER_TOPIC, 16, Duration.ofMinutes(3));
      long fetchedMs = (System.nanoTime() - fetching) / 1_000_000;
      ConnectionBurst.Result result;
      ConnectionBurst.Result unknown;
      List<String> problems;
      long[] samples = new long[nodes.size()];
      long[] unanswered = new long[nodes.size()];
      long slowest;
      try (MembershipWatch watch = new MembershipWatch(nodes, SAMPLE_PERIOD)) {
        Await.until("every node answered a membership sample before the burst", Duration.ofSeconds(30),
            () -> IntStream.range(0, nodes.size()).allMatch(i -> watch.samples(i) > 0));
        result = burst.open(target.relayPort, codes, CONCURRENCY);
        unknown = burst.open(target.relayPort, unknownCodes(codes), CONCURRENCY);
        Await.pause(OBSERVE_AFTER.toMillis());
        watch.close();
        problems = watch.problems();
        for (int i = 0; i < nodes.size(); i++) {
          samples[i] = watch.samples(i);
          unanswered[i] = watch.unanswered(i);
        }
        slowest = watch.slowestMillis();
      }
      double held = target.metric("relay_connections");
      List<String> unreachableLines = unreachableLines(cluster.logs());

      if (FULL) {
        System.out.printf(
            "connection burst: %d connections at %s in %d ms (%.0f/s), %d upgraded, refused %s, node holds %.0f connections "
                + "(%d codes fetched in %d ms beforehand); then %d upgrades with unknown codes in %d ms (%.0f/s), answered %s; membership samples per node %s, unanswered %s, slowest answer %d ms; "
                + "samples with a member unreachable or not Up: %d; log lines about unreachability: %d%n",
            CONNECTIONS, target.name, result.millis(), result.perSecond(), result.upgraded(), result.refusals(), held,
            CONNECTIONS, fetchedMs, CONNECTIONS, unknown.millis(), CONNECTIONS * 1000.0 / Math.max(1, unknown.millis()), unknown.refusals(), Arrays.toString(samples), Arrays.toString(unanswered), slowest,
            problems.size(), unreachableLines.size());
      }
      scenario.put("connections", CONNECTIONS);
      scenario.put("burst_ms", result.millis());
      scenario.put("burst_per_second", Math.round(result.perSecond()));
      scenario.put("upgraded", result.upgraded());
      scenario.put("refusals_by_status", result.refusals());
      scenario.put("unknown_code_ms", unknown.millis());
      scenario.put("unknown_code_answers", unknown.refusals());
      scenario.put("membership_samples", samples);
      scenario.put("membership_samples_unanswered", unanswered);
      scenario.put("membership_problems", problems.size());

      assertTrue(problems.isEmpty(), "no node saw a member unreachable or not Up; saw: " + problems);
      assertTrue(unreachableLines.isEmpty(), "no node logged a member as unreachable: " + unreachableLines);
      for (int i = 0; i < nodes.size(); i++) {
        assertTrue(samples[i] > 0, nodes.get(i).name + " answered membership samples");
      }
      assertEquals(CONNECTIONS, result.upgraded(), "every connection of the burst was upgraded; refused: " + result.refusals());
      assertEquals(Map.of(401, CONNECTIONS), unknown.refusals(), "every upgrade with an unknown code got 401");
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.report(passed);
    }
  }

  /**
   * Relay targets with codes no node issued, each naming the issuer of one of {@code issued} (a
   * code's random part comes first, its issuer's id last): each costs the node a claim at the named
   * issuer before its 401.
   */
  private static List<String> unknownCodes(List<String> issued) {
    List<String> targets = new ArrayList<>();
    for (int i = 0; i < CONNECTIONS; i++) {
      String real = issued.get(i).substring(issued.get(i).indexOf("code=") + "code=".length());
      byte[] code = Base64.getUrlDecoder().decode(real);
      byte[] random = new byte[16];
      ThreadLocalRandom.current().nextBytes(random);
      System.arraycopy(random, 0, code, 0, random.length);
      targets.add("/session/burst/unknown-" + (i / PER_TOPIC) + "?code=" + Base64.getUrlEncoder().withoutPadding().encodeToString(code));
    }
    return targets;
  }

  /** Lines of the nodes' logs that mention unreachability ("Marking node as UNREACHABLE", SBR's). */
  private static List<String> unreachableLines(List<Path> logs) throws IOException {
    List<String> lines = new ArrayList<>();
    for (Path log : logs) {
      try (Stream<String> content = Files.lines(log)) {
        content.filter(l -> l.toLowerCase().contains("unreachable")).forEach(l -> lines.add(log.getFileName() + ": " + l));
      }
    }
    return lines;
  }
}
