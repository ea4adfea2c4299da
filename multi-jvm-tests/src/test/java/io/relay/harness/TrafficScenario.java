package io.relay.harness;

import io.relay.testing.Await;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The skeleton every scenario under traffic shares: a proxy in front of a cluster, topics of one
 * writer and some readers connected through it, frames flowing to every reader before the event,
 * the event (the test's own), frames flowing to every reader again after convergence, then the
 * delivery analysis, the log check and the report entry (written whether the run passed or not).
 */
final class TrafficScenario {
  /** Frames every reader must receive before the event and again after convergence. */
  private static final int FRAMES_AROUND_THE_EVENT = 20;

  /** What an event and the checks after it work with. */
  record Run(Proxy proxy, RelayCluster cluster, Traffic traffic, Scenario scenario, PodNetwork network) {
    /**
     * Waits until every topic is on exactly one node with all its participants and {@code also}
     * holds of the cluster's view; records the convergence time since {@code event} (nanoTime).
     */
    void awaitConverged(String what, long event, Predicate<ClusterView.Snapshot> also) {
      Await.until(what, Duration.ofSeconds(60), () -> converged(also));
      scenario.convergence((System.nanoTime() - event) / 1_000_000);
    }

    boolean converged(Predicate<ClusterView.Snapshot> also) {
      ClusterView.Snapshot now = ClusterView.status(proxy.accessUrl());
      return now.converged(ScenarioAssertions.expected(traffic)) && also.test(now);
    }

    void awaitConverged(String what, long event) {
      awaitConverged(what, event, snapshot -> true);
    }

    /**
     * The cluster's view once it has converged (every node answering, every topic on one node
     * with all its participants): a view to read who hosts what, never one a node was missing from.
     */
    ClusterView.Snapshot converged() {
      ClusterView.Snapshot[] seen = new ClusterView.Snapshot[1];
      Await.until("a /status with every node answering and every topic on one node with all its participants", Duration.ofSeconds(60),
          () -> (seen[0] = ClusterView.status(proxy.accessUrl())).converged(ScenarioAssertions.expected(traffic)),
          () -> "missing nodes: " + seen[0].missingNodes() + "; topics: " + seen[0].nodesByTopic());
      return seen[0];
    }
  }

  private final HarnessConfig config = HarnessConfig.fromSystemProperties();
  private final Scenario scenario;
  private final String proxyKind;
  private int nodes = 3;
  private Map<String, String> env = Map.of();
  private String prefix;
  private int topics;
  private int readers = 1;
  private Duration framePeriod = Duration.ofMillis(50);
  private Duration connectWithin = Duration.ofSeconds(60);
  private Duration settle = Duration.ofSeconds(1);
  private boolean podNetwork;
  private Duration silence = Duration.ZERO;
  /** The split brain resolver's stable-after; null: the harness's (RelayCluster). */
  private Duration stableAfter;
  /** The build the cluster starts with, on plain TCP links; null: the current build over TLS. */
  private NodeBuild plainLinksBuild;

  TrafficScenario(String name, String proxyKind) {
    this.scenario = new Scenario(config, name, proxyKind);
    this.proxyKind = proxyKind;
  }

  TrafficScenario nodes(int n, Map<String, String> nodeEnv) {
    this.nodes = n;
    this.env = nodeEnv;
    return this;
  }

  /** {@code n} topics {@code prefix-0..n-1} of one writer and {@code readersPerTopic} readers. */
  TrafficScenario topics(String topicPrefix, int n, int readersPerTopic) {
    this.prefix = topicPrefix;
    this.topics = n;
    this.readers = readersPerTopic;
    return this;
  }

  /** One frame per topic every {@code period}; everyone connected within {@code within}. */
  TrafficScenario pace(Duration period, Duration within) {
    this.framePeriod = period;
    this.connectWithin = within;
    return this;
  }

  /**
   * Runs the nodes each in a network namespace of a {@link PodNetwork}, at addresses of their own,
   * where the event can cut their links; the caller checks {@link PodNetwork#unavailable} first.
   */
  TrafficScenario podNetwork() {
    this.podNetwork = true;
    return this;
  }

  /** Clients give up a connection silent for {@code limit} and reconnect ({@link Traffic#silence}). */
  TrafficScenario clientSilence(Duration limit) {
    this.silence = limit;
    return this;
  }

  /**
   * The cluster starts with nodes of {@code build}, its links plain TCP ({@link
   * RelayCluster#onPlainLinks}), so that nodes of another build can join it.
   */
  TrafficScenario plainLinks(NodeBuild build) {
    this.plainLinksBuild = build;
    return this;
  }

  /** The nodes' split brain resolver waits {@code duration} before it downs a side ({@link RelayCluster#stableAfter}). */
  TrafficScenario stableAfter(Duration duration) {
    this.stableAfter = duration;
    return this;
  }

  /** How long, at most, readers may take to get their topics' last frames once sending stops. */
  TrafficScenario settle(Duration lastFrames) {
    this.settle = lastFrames;
    return this;
  }

  private RelayCluster cluster(Proxy proxy, PodNetwork network) {
    RelayCluster cluster;
    if (plainLinksBuild == null) {
      cluster = new RelayCluster(config, proxy.relayUrl(), env, network);
    } else if (network != null) {
      throw new IllegalStateException("a cluster on plain links runs on loopback");
    } else {
      cluster = RelayCluster.onPlainLinks(config, proxy.relayUrl(), env, plainLinksBuild);
    }
    return stableAfter == null ? cluster : cluster.stableAfter(stableAfter);
  }

  /** Where the harness finds the jars and writes, for a scenario that builds another release. */
  HarnessConfig config() {
    return config;
  }

  /** The scenario's report entry, for figures of the test's own. */
  Scenario scenario() {
    return scenario;
  }

  void run(Consumer<Run> event) {
    run(event, run -> {});
  }

  /**
   * Runs the scenario: {@code event} happens under traffic and ends once the cluster has
   * converged; {@code checks} run after the delivery analysis, with the counters read after.
   */
  void run(Consumer<Run> event, Consumer<Run> checks) {
    long started = System.nanoTime();
    boolean passed = false;
    try (PodNetwork network = podNetwork ? PodNetwork.create() : null;
        Proxy proxy = Proxy.of(proxyKind, config);
        RelayCluster cluster = cluster(proxy, network).start(nodes);
        Traffic traffic = new Traffic(proxy.accessUrl()).silence(silence)) {
      proxy.start(cluster.running());
      Run run = new Run(proxy, cluster, traffic, scenario, network);
      long connecting = System.nanoTime();
      traffic.topics(prefix, topics, readers).connect(connectWithin);
      scenario.put("all_connected_after_ms", (System.nanoTime() - connecting) / 1_000_000);
      Await.until("every topic is on exactly one node with all its participants before the event", Duration.ofSeconds(60),
          () -> run.converged(snapshot -> true));
      traffic.startSending(framePeriod);
      traffic.awaitFrames("before the event", FRAMES_AROUND_THE_EVENT, Duration.ofSeconds(60));
      scenario.countersBefore(cluster.running());

      event.accept(run);
      traffic.awaitFrames("after convergence", FRAMES_AROUND_THE_EVENT, Duration.ofSeconds(60));
      traffic.stopSending(settle);
      scenario.counters(cluster.running());

      scenario.put("refusals_by_status", traffic.refusals());
      Delivery.Summary delivery = traffic.analyse(Scenario.IN_FLIGHT_ALLOWANCE);
      scenario.delivery(delivery);
      ScenarioAssertions.deliveredAsPromised(delivery);
      checks.accept(run);
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      scenario.put("scenario_ms", (System.nanoTime() - started) / 1_000_000);
      scenario.report(passed);
    }
  }
}
