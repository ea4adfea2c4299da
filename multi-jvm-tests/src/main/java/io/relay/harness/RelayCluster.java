package io.relay.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A cluster of node JVMs: started, scaled up and down, crashed and restarted by the harness, and
 * always stopped, by pid, when closed.
 */
public final class RelayCluster implements AutoCloseable {
  /** Faster than production (20 s), so a crashed node is downed within a scenario's budget. */
  private static final Map<String, String> HARNESS_JVM =
      Map.of("pekko.cluster.split-brain-resolver.stable-after", "5s");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final HarnessConfig config;
  private final String relayUrl;
  private final Map<String, String> env;
  private final List<NodeProcess> running = new ArrayList<>();
  private final List<NodeProcess> everStarted = new ArrayList<>();
  private int counter;

  /**
   * @param relayUrl the relay URL nodes write into codes' URIs: the proxy's relay port
   * @param env RELAY_* settings for every node
   */
  public RelayCluster(HarnessConfig config, String relayUrl, Map<String, String> env) {
    this.config = config;
    this.relayUrl = relayUrl;
    this.env = env;
  }

  /** Starts {@code n} nodes in parallel as one cluster and waits until all are ready. */
  public RelayCluster start(int n) {
    List<NodeProcess> started = new ArrayList<>();
    NodeProcess first = launch(List.of());
    started.add(first);
    for (int i = 1; i < n; i++) {
      started.add(launch(List.of(first.address())));
    }
    CompletableFuture.allOf(
            started.stream().map(node -> CompletableFuture.runAsync(() -> node.awaitReady(START_TIMEOUT))).toArray(CompletableFuture[]::new))
        .join();
    running.addAll(started);
    return this;
  }

  /** Starts one more node, joining the running ones, and waits until it is ready. */
  public NodeProcess scaleUp() {
    NodeProcess node = launch(running.stream().map(NodeProcess::address).toList());
    node.awaitReady(START_TIMEOUT);
    running.add(node);
    return node;
  }

  private NodeProcess launch(List<String> seeds) {
    NodeProcess node = new NodeProcess(config, "node" + (++counter), NodeCommand.java(config), seeds, relayUrl, env, HARNESS_JVM);
    everStarted.add(node);
    return node;
  }

  /** Sends SIGTERM; the node drains and exits on its own. It no longer counts as running. */
  public void terminate(NodeProcess node) {
    running.remove(node);
    node.process().terminate();
  }

  /** Sends SIGKILL. */
  public void crash(NodeProcess node) {
    running.remove(node);
    node.process().kill();
  }

  /** The logs of every node this cluster started. */
  public List<java.nio.file.Path> logs() {
    return everStarted.stream().map(n -> n.process().log()).toList();
  }

  public List<NodeProcess> running() {
    return List.copyOf(running);
  }

  /** Kills every node this cluster ever started that still runs. */
  @Override
  public void close() {
    everStarted.forEach(NodeProcess::close);
  }
}
