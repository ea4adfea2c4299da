package io.relay.harness;

import io.relay.testing.Await;
import io.relay.testing.ClusterPki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A cluster of node JVMs: started, scaled up and down, crashed and restarted by the harness, and
 * always stopped, by pid, when closed. Its nodes' cluster links run over mutual TLS: the cluster
 * has a CA of its own, made by openssl, and each node a certificate from it in a directory of its
 * own ({@code RELAY_CLUSTER_TLS_DIR}); or, in a cluster made {@link #onPlainLinks}, over plain TCP,
 * which every build can join. Its nodes are of the current build unless started from another
 * ({@link NodeBuild}). Nodes run on loopback, or each in a network namespace of a {@link
 * PodNetwork} at an address of its own, where the test can cut their links.
 */
public final class RelayCluster implements AutoCloseable {
  private static final String STABLE_AFTER = "pekko.cluster.split-brain-resolver.stable-after";
  /** Faster than production (20 s), so a crashed node is downed within a scenario's budget. */
  private static final Map<String, String> HARNESS_JVM = Map.of(STABLE_AFTER, "5s");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final HarnessConfig config;
  private final String relayUrl;
  private final Map<String, String> env;
  private final List<NodeProcess> running = new ArrayList<>();
  private final List<NodeProcess> everStarted = new ArrayList<>();
  private final Map<NodeProcess, Path> tlsDirs = new HashMap<>();
  private final Map<NodeProcess, PodNetwork.Slot> slots = new HashMap<>();
  private final Map<NodeProcess, NodeBuild> builds = new HashMap<>();
  private final ClusterPki pki;
  private final PodNetwork network;
  private final NodeBuild build;
  private final boolean tlsLinks;
  private Map<String, String> jvmProperties = HARNESS_JVM;
  private int counter;

  /**
   * @param relayUrl the relay URL nodes write into codes' URIs: the proxy's relay port
   * @param env RELAY_* settings for every node
   */
  public RelayCluster(HarnessConfig config, String relayUrl, Map<String, String> env) {
    this(config, relayUrl, env, null);
  }

  /** A cluster whose nodes each run in a namespace of {@code network}; on loopback if null. */
  public RelayCluster(HarnessConfig config, String relayUrl, Map<String, String> env, PodNetwork network) {
    this(config, relayUrl, env, network, NodeBuild.current(config), true);
  }

  /**
   * A cluster whose links are plain TCP ({@code RELAY_CLUSTER_TRANSPORT=tcp}), as the links of
   * release 0.2.0 are: nodes of that release and of the current build can be members together.
   *
   * @param build the build {@link #start} and {@link #scaleUp()} start nodes of
   */
  public static RelayCluster onPlainLinks(HarnessConfig config, String relayUrl, Map<String, String> env, NodeBuild build) {
    Map<String, String> plain = new HashMap<>(env);
    plain.put("RELAY_CLUSTER_TRANSPORT", "tcp");
    return new RelayCluster(config, relayUrl, plain, null, build, false);
  }

  private RelayCluster(
      HarnessConfig config, String relayUrl, Map<String, String> env, PodNetwork network, NodeBuild build, boolean tlsLinks) {
    this.network = network;
    this.build = build;
    this.tlsLinks = tlsLinks;
    this.config = config;
    this.relayUrl = relayUrl;
    this.env = env;
    try {
      Path work = Files.createDirectories(config.workDir());
      this.pki = ClusterPki.create(Files.createTempDirectory(work, "cluster-pki-"), "relay-harness-ca");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Nodes started from now on run the split brain resolver with {@code stableAfter} instead of
   * the harness's 5 s: the time a partition must last, once seen, before a side is downed.
   */
  public RelayCluster stableAfter(Duration stableAfter) {
    jvmProperties = Map.of(STABLE_AFTER, stableAfter.toMillis() + "ms");
    return this;
  }

  /**
   * Starts {@code n} nodes in parallel as one cluster and waits until all are ready and each lists
   * exactly the {@code n} as members, all Up (a node is ready once it is Up itself; the others
   * learn it by gossip).
   */
  public RelayCluster start(int n) {
    try {
      List<NodeProcess> started = new ArrayList<>();
      NodeProcess first = launch(List.of(), build);
      started.add(first);
      for (int i = 1; i < n; i++) {
        started.add(launch(List.of(first.address()), build));
      }
      CompletableFuture.allOf(
              started.stream().map(node -> CompletableFuture.runAsync(() -> node.awaitReady(START_TIMEOUT))).toArray(CompletableFuture[]::new))
          .join();
      Map<String, String> allUp = new java.util.TreeMap<>();
      started.forEach(node -> allUp.put(node.address(), "Up"));
      for (NodeProcess node : started) {
        Await.until(node + " lists the " + n + " nodes started as members, all Up", START_TIMEOUT,
            () -> node.members().equals(allUp), () -> "members: " + node.members());
      }
      running.addAll(started);
      return this;
    } catch (RuntimeException | AssertionError failed) {
      close(); // the caller's try-with-resources never got the cluster: its nodes are stopped here
      throw failed;
    }
  }

  /** Starts one more node, joining the running ones, and waits until it is ready. */
  public NodeProcess scaleUp() {
    return scaleUp(build);
  }

  /** Starts one more node of {@code nodeBuild}, joining the running ones, and waits until it is ready. */
  public NodeProcess scaleUp(NodeBuild nodeBuild) {
    NodeProcess node = launch(running.stream().map(NodeProcess::address).toList(), nodeBuild);
    node.awaitReady(START_TIMEOUT);
    running.add(node);
    return node;
  }

  private NodeProcess launch(List<String> seeds, NodeBuild nodeBuild) {
    String name = "node" + (++counter);
    return launch(name, seeds, network == null ? null : network.add(name), nodeBuild);
  }

  private NodeProcess launch(String name, List<String> seeds, PodNetwork.Slot slot, NodeBuild nodeBuild) {
    Map<String, String> nodeEnv = new HashMap<>(env);
    nodeEnv.putAll(nodeBuild.env());
    Path tls = tlsLinks ? issue(name) : null;
    if (tls != null) {
      nodeEnv.put("RELAY_CLUSTER_TLS_DIR", tls.toString());
    }
    HarnessConfig nodeConfig = config.withJar(nodeBuild.jar());
    NodeProcess node = new NodeProcess(nodeConfig, name, NodeCommand.java(nodeConfig), seeds, relayUrl, nodeEnv, jvmProperties, slot);
    everStarted.add(node);
    builds.put(node, nodeBuild);
    if (tls != null) {
      tlsDirs.put(node, tls);
    }
    if (slot != null) {
      slots.put(node, slot);
    }
    return node;
  }

  /** The build {@code node} was started from. */
  public NodeBuild buildOf(NodeProcess node) {
    return builds.get(node);
  }

  /** Where {@code node} runs in the cluster's {@link PodNetwork}. */
  public PodNetwork.Slot slot(NodeProcess node) {
    PodNetwork.Slot slot = slots.get(node);
    if (slot == null) {
      throw new IllegalStateException(node + " runs on loopback, not in a network namespace");
    }
    return slot;
  }

  /**
   * Starts {@code gone} (a node that has exited) again in its namespace, at its address, joining
   * the running nodes, and waits until it is ready.
   */
  public NodeProcess restart(NodeProcess gone) {
    if (gone.process().isAlive()) {
      throw new IllegalStateException(gone + " still runs: it cannot be restarted");
    }
    NodeProcess node = launch(gone.name, running.stream().map(NodeProcess::address).toList(), slots.get(gone), builds.get(gone));
    node.awaitReady(START_TIMEOUT);
    running.add(node);
    return node;
  }

  /**
   * {@code node} is cut off and no longer counts as running (it is not a seed for new nodes and
   * not in the proxy's list), though its JVM may still run; it is stopped with the cluster.
   */
  public void lose(NodeProcess node) {
    running.remove(node);
  }

  /**
   * Starts a node that tries to join the running nodes with {@code settings} on top of the
   * cluster's (its own cluster TLS settings, say), without waiting for anything; it is stopped
   * with the cluster.
   */
  public NodeProcess launchOutsider(String name, Map<String, String> settings) {
    Map<String, String> nodeEnv = new HashMap<>(env);
    nodeEnv.putAll(settings);
    List<String> seeds = running.stream().map(NodeProcess::address).toList();
    NodeProcess node = new NodeProcess(config, name, NodeCommand.java(config), seeds, relayUrl, nodeEnv, jvmProperties);
    everStarted.add(node);
    return node;
  }

  /** The cluster's CA, which issued its nodes' certificates. */
  public ClusterPki pki() {
    return pki;
  }

  /** Where {@code node} reads its cluster certificate, key and CA from. */
  public Path tlsDir(NodeProcess node) {
    return tlsDirs.get(node);
  }

  private Path issue(String name) {
    try {
      return pki.issue(pki.dir().resolve(name), ClusterPki.CLUSTER_NAME);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
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
