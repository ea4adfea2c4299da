package io.relay.harness;

import static io.relay.harness.Partitions.allUp;
import static io.relay.harness.Partitions.since;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A flapping link under traffic: one node of three, each in a network namespace of its own ({@link
 * PodNetwork}), has its link taken down and up again on a fixed schedule of short outages while
 * frames flow (the proxy and the clients lose it too). Each outage, TCP's retransmission included,
 * ends well within the split brain resolver's stable-after, whatever the failure detector makes of
 * it: the resolver downs nobody, no connection closes, every frame reaches every reader once and
 * in order (late, never lost), no topic is ever reported on two nodes, and the cluster ends with
 * the three nodes Up. Skipped, saying why, where namespaces cannot be made.
 */
class PartitionFlappingIT {
  /** One outage of the link and the time it stays up after it. */
  private record Flap(long downMillis, long upMillis) {}

  /**
   * Outages of 1 to 2 s, each followed by 2.5 to 3 s up: a link that drops again and again, but
   * whose every up lasts longer than TCP takes to retransmit after an outage that short (its
   * backoff doubles from about 200 ms: 0.2, 0.6, 1.4, 3.0 s after the first loss, so at most about
   * 1.7 s after the link is back), so each up carries traffic again. A link whose ups are shorter
   * than that backoff is one long outage to TCP, with outcomes that vary from run to run
   * (docs/cluster.md, "Split brain").
   */
  private static final List<Flap> SCHEDULE =
      List.of(
          new Flap(1500, 2500), new Flap(2000, 3000), new Flap(1000, 2500), new Flap(2000, 2500),
          new Flap(1500, 3000), new Flap(1000, 2500), new Flap(2000, 3000), new Flap(1500, 2500));
  private static final Duration SAMPLE_EVERY = Duration.ofMillis(200);
  private static final Duration MEMBERSHIP = Duration.ofSeconds(60);

  @BeforeAll
  static void namespacesCanBeMade() {
    Partitions.assumeNamespaces();
  }

  @Test
  void aFlappingLinkDownsNobodyAndEveryFrameArrivesOnceInOrder() {
    new TrafficScenario("partition-link-flapping", "nginx")
        .podNetwork()
        .topics("flap", 30, 1)
        .run(
            run -> {
              RelayCluster cluster = run.cluster();
              List<NodeProcess> nodes = cluster.running();
              NodeProcess flapping = nodes.get(2);
              PodNetwork.Slot slot = cluster.slot(flapping);
              List<Long> pids = nodes.stream().map(n -> n.process().pid()).toList();
              Set<String> hosted = run.converged().topicsByNode().getOrDefault(flapping.address(), Set.of());
              assertTrue(!hosted.isEmpty(), "the node whose link flaps hosts topics");
              List<String> steady = List.of(accessUrl(nodes.get(0)), accessUrl(nodes.get(1)));

              long event = System.nanoTime();
              long down = 0;
              try (PlacementWatch placement = new PlacementWatch(steady, SAMPLE_EVERY)) {
                for (Flap flap : SCHEDULE) {
                  run.network().cut(slot);
                  try {
                    Await.pause(flap.downMillis());
                  } finally {
                    run.network().reconnect(slot);
                  }
                  down += flap.downMillis();
                  Await.pause(flap.upMillis());
                }
                long flapped = System.nanoTime();
                long flappedMs = since(event);
                Await.until("every node lists the three nodes, all Up and reachable, after the flapping", MEMBERSHIP,
                    () -> nodes.stream().allMatch(n -> n.unreachable().isEmpty() && n.members().equals(allUp(nodes))));
                run.awaitConverged("every topic is on exactly one node with all its participants after the flapping", flapped);
                placement.close();
                // frames a node dropped from a reader's full outbound queue (a reader behind a stalled link)
                run.scenario().put("frames_dropped_by_nodes", Math.round(nodes.stream().mapToDouble(n -> n.metric("relay_frames_dropped_total")).sum()));

                assertEquals(pids, nodes.stream().map(n -> n.process().isAlive() ? n.process().pid() : -1).toList(),
                    "no node was downed or exited");
                assertTrue(placement.samples() - placement.incomplete() >= SCHEDULE.size(),
                    "at least one complete sample of where the topics are per flap, so the next check saw something: "
                        + placement.samples() + " samples, " + placement.incomplete() + " incomplete");
                assertTrue(placement.onTwoNodes().isEmpty(), "no topic was on two nodes at once: " + placement.onTwoNodes());
                run.scenario().put("topics_on_flapping_node", hosted.size());
                run.scenario().put("flaps", SCHEDULE.size());
                run.scenario().put("link_down_ms", down);
                run.scenario().put("flapping_ms", flappedMs);
                run.scenario().put("placement_samples", placement.samples());
                run.scenario().put("placement_samples_incomplete", placement.incomplete());
              }
            },
            run -> {
              List<String> closed = new ArrayList<>();
              run.traffic().topics().values().forEach(t -> t.participants().stream()
                  .filter(p -> p.connections().size() != 1)
                  .forEach(p -> closed.add(p.name + " " + p.connections())));
              run.scenario().put("connections_closed", closed.size());
              run.scenario().put("unreachable_marks", logLines(run.cluster().logs(), "Marking node as UNREACHABLE"));
              assertTrue(closed.isEmpty(), "no connection was closed: TCP carried every connection across the outages: " + closed);
            });
  }

  private static String accessUrl(NodeProcess node) {
    return "http://" + node.host + ":" + node.accessPort;
  }

  /** How many lines of {@code logs} contain {@code text}. */
  private static long logLines(List<Path> logs, String text) {
    long lines = 0;
    for (Path log : logs) {
      try {
        lines += Files.readAllLines(log, StandardCharsets.ISO_8859_1).stream().filter(l -> l.contains(text)).count();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + log, e);
      }
    }
    return lines;
  }
}
