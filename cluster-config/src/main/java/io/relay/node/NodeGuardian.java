package io.relay.node;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.handler.ssl.SslContext;
import io.relay.Ask;
import io.relay.RelaySettings;
import io.relay.codes.CodeShardStats;
import io.relay.codes.CodeStore;
import io.relay.codes.CodeSweep;
import io.relay.deny.Cancel;
import io.relay.deny.DenyCapacity;
import io.relay.deny.DenyList;
import io.relay.http.AdminGuard;
import io.relay.http.HttpApi;
import io.relay.http.HttpServer;
import io.relay.http.HttpSettings;
import io.relay.http.RelayServices;
import io.relay.http.server.ClientPorts;
import io.relay.http.server.PortCounters;
import io.relay.http.server.PortSettings;
import io.relay.memory.BufferChecks;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.status.ClusterStatus;
import io.relay.status.StatsTopic;
import io.relay.topic.ClaimAnnouncement;
import io.relay.topic.ConnectionDirectory;
import io.relay.topic.TopicActor;
import io.relay.topic.TopicRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.management.cluster.bootstrap.ClusterBootstrap;
import org.apache.pekko.management.javadsl.PekkoManagement;
import org.apache.pekko.pattern.Patterns;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's guardian: it joins a cluster of its own when no seed nodes or discovery are set,
 * spawns the services (codes, deny list, topics, cluster status, the claims and cancels
 * channels), starts Pekko Management and Cluster Bootstrap, binds the access and relay ports and
 * registers the drain; and stops the node should the codes, the deny list or the topics stop.
 */
final class NodeGuardian {
  private static final Logger LOG = LoggerFactory.getLogger(NodeGuardian.class);

  private NodeGuardian() {}

  static Behavior<Void> create(RelayNode.Settings settings) {
    return Behaviors.setup(
        context -> {
          ActorSystem<Void> system = context.getSystem();
          Cluster cluster = Cluster.get(system);
          if (settings.node().seedNodes().isEmpty() && settings.node().discovery().isEmpty()) {
            cluster.manager().tell(Join.create(cluster.selfMember().address()));
          }
          String node = cluster.selfMember().address().toString();
          NodeState state = NodeState.get(system);
          RelayServices services = spawnServices(context, settings.relay(), state, node);
          context.spawn(LeaveWatcher.create(), "leave-watcher");
          state.allowClusterWrites(clusterWriters(settings));
          PekkoManagement.get(system.classicSystem()).start().exceptionally(failure -> {
            // no /ready, /alive or /metrics, and no contact point for bootstrap: not a node to run
            LOG.error("cannot bind the management port to {}:{}; stopping the node", settings.node().managementHost(), settings.node().portManagement(), failure);
            CoordinatedShutdown.get(system).run(HttpServer.CannotBind.INSTANCE);
            return null;
          });
          if (!settings.node().discovery().isEmpty()) {
            ClusterBootstrap.get(system.classicSystem()).start();
          }
          bindServers(system, settings, services, state);
          registerDrain(system, settings, services, state);
          LogFormat.flushAtExit(system);
          context.watch(services.codes());
          context.watch(services.denyList());
          context.watch(services.registry());
          return Behaviors.receive(Void.class).onSignal(Terminated.class, stopped -> serviceStopped(system, stopped)).build();
        });
  }

  /** A service of the node stopped, which it does only after a fault: the node stops, to be restarted. */
  enum ServiceStopped implements CoordinatedShutdown.Reason { INSTANCE }

  /**
   * One of the services every request needs (codes, deny list, topics) stopped outside a
   * shutdown, after a fault (logged by Pekko at ERROR): without it the node would answer 503 to
   * every code request and upgrade while it still looked ready, so it stops with exit status 1
   * instead, for systemd or Kubernetes to start it again.
   */
  private static Behavior<Void> serviceStopped(ActorSystem<Void> system, Terminated stopped) {
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    if (shutdown.getShutdownReason().isEmpty()) {
      LOG.error("the node's {} service stopped; stopping the node so that it is started again", stopped.getRef().path().name());
      shutdown.run(ServiceStopped.INSTANCE);
    }
    return Behaviors.same();
  }

  /** Who may change the cluster through the management port: relay admins if enabled, else nobody. */
  private static Optional<AdminGuard> clusterWriters(RelayNode.Settings settings) {
    if (!settings.node().managementWrites()) {
      LOG.info("management port {}:{} is read-only: cluster writes are disabled (RELAY_MANAGEMENT_WRITES)",
          settings.node().managementHost(), settings.node().portManagement());
      return Optional.empty();
    }
    LOG.info("management port {}:{} accepts cluster writes with a relay:admin token",
        settings.node().managementHost(), settings.node().portManagement());
    return Optional.of(new AdminGuard(settings.http(), settings.keys()));
  }

  private static RelayServices spawnServices(
      ActorContext<Void> context, RelaySettings relay, NodeState state, String node) {
    RelayMetrics metrics = state.metrics();
    MemoryBudget budget = new MemoryBudget(relay.memoryBudget(), (holder, held) -> metrics.connectionsShed.inc());
    metrics.gauge("relay_memory_budget_bytes", "What the node holds at most of queued frames and partly received messages", budget::limit);
    metrics.gauge("relay_memory_held_bytes", "Queued frames and partly received messages the node holds now", budget::used);
    java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
    metrics.gauge("relay_jvm_heap_used_bytes", "The JVM's heap in use", () -> memory.getHeapMemoryUsage().getUsed());
    metrics.gauge("relay_jvm_heap_max_bytes", "The JVM's maximum heap", () -> memory.getHeapMemoryUsage().getMax());
    ByteBufAllocatorMetric buffers = ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
    metrics.gauge("relay_netty_direct_memory_bytes", "Direct memory held by Netty's buffer allocator (JVM-wide)", buffers::usedDirectMemory);
    metrics.gauge("relay_netty_heap_memory_bytes", "Heap memory held by Netty's buffer allocator (JVM-wide)", buffers::usedHeapMemory);
    metrics.info("relay_build", "The node's build", "version", RelayCli.version());
    metrics.counter(
        "relay_buffer_faults",
        "Faults in the accounting of relayed frames: let go of more often than held, or used after their last holder let go (JVM-wide; any is a bug, logged at ERROR)",
        BufferChecks::count);
    ConnectionDirectory directory = new ConnectionDirectory();
    ActorRef<Topic.Command<ClaimAnnouncement>> claims =
        context.spawn(Topic.create(ClaimAnnouncement.class, "relay-claims"), "claims-channel");
    ActorRef<Topic.Command<Cancel>> cancels =
        context.spawn(Topic.create(Cancel.class, "relay-cancels"), "cancels-channel");
    ActorRef<ClusterStatus.Gather> clusterStatus =
        context.spawn(ClusterStatus.create(relay.statusTimeout()), "cluster-status");
    ActorRef<TopicRegistry.Command> registry =
        context.spawn(
            TopicRegistry.create(
                new TopicActor.Context(
                    relay, metrics, budget, directory, node, new StatsTopic(clusterStatus, relay, metrics, budget),
                    state.denyList()),
                claims,
                System::currentTimeMillis),
            "topics");
    CodeShardStats codeShards = new CodeShardStats();
    ActorRef<CodeStore.Command> codes =
        context.spawn(CodeStore.create(relay, System::currentTimeMillis, metrics), "codes");
    context.spawn(CodeSweep.create(relay, System::currentTimeMillis, codeShards), "code-sweep");
    metrics.gauge("relay_codes_replicated", "Unexpired codes in this node's replica, as of the last sweep", codeShards::codes);
    metrics.gauge(
        "relay_code_shard_largest",
        "Unexpired codes in the fullest code shard of this node's replica, as of the last sweep (about 90 at 3,000 codes/s)",
        codeShards::largestShard);
    metrics.gauge(
        "relay_code_horizon_ahead_seconds",
        "How far the furthest code shard's pruning horizon was ahead of this node's clock at the last sweep: "
            + "another node's clock is ahead of this one's by more than the code sweep interval by that much (0: none)",
        codeShards::horizonAheadSeconds);
    ActorRef<DenyList.Command> denyList =
        context.spawn(
            DenyList.create(relay, registry, cancels, () -> Instant.now().getEpochSecond(), state.denyList()),
            "deny-list");
    metrics.gauge("relay_connections", "Open WebSocket connections on this node", directory::size);
    metrics.gauge("relay_topics", "Topics hosted on this node", directory::topicCount);
    metrics.gauge(
        "relay_deny_list_entries",
        "Deny and allow entries in this node's replica of the deny list (capacity " + DenyCapacity.DEFAULT.total() + ")",
        () -> state.denyList().entries());
    metrics.gauge(
        "relay_deny_list_read",
        "1 when this node has read the deny list from a majority of nodes (it issues codes and admits connections)",
        () -> state.denyList().isRead() ? 1 : 0);
    Cluster cluster = Cluster.get(context.getSystem());
    metrics.gauge(
        "relay_cluster_members",
        "Members of the cluster as this node sees them",
        () -> cluster.state().getMembers().spliterator().estimateSize());
    return new RelayServices(relay, codes, denyList, state.denyList(), registry, clusterStatus, directory, metrics);
  }

  private static void bindServers(
      ActorSystem<Void> system, RelayNode.Settings settings, RelayServices services, NodeState state) {
    HttpApi api = new HttpApi(settings.http(), settings.keys(), services, system, state::isDraining);
    HttpSettings http = settings.http();
    Optional<SslContext> tls = settings.tls();
    ClientPorts ports = HttpServer.start(system, settings.ports(), settings.node().unbindDeadline(), http.logLimitInterval());
    registerPortMetrics(state.metrics(), ports, settings.ports());
    PortCounters counters = ports.counters();
    CompletionStage<InetSocketAddress> access =
        settings.node().runsAccess()
            ? HttpServer.bind(
                system, ports, "access API", http.host(), http.portAccess(), tls, api.accessPort(counters, settings.ports().idleTimeout()))
            : CompletableFuture.completedFuture(null);
    CompletionStage<InetSocketAddress> relay =
        settings.node().runsRelay()
            ? HttpServer.bind(system, ports, "relay", http.host(), http.portRelay(), tls, api.relayPort(counters, ports::loopFor))
            : CompletableFuture.completedFuture(null);
    access.thenAcceptBoth(relay, state::serversBound);
  }

  private static void registerPortMetrics(RelayMetrics metrics, ClientPorts ports, PortSettings settings) {
    PortCounters counters = ports.counters();
    metrics.gauge("relay_socket_connections", "Client connections open on the node's client ports", ports::connections);
    metrics.gauge("relay_max_connections", "Client connections the node's client ports hold at most", settings::maxConnections);
    metrics.counter("relay_accept_failures", "accept() calls that failed (file descriptors exhausted)", counters.acceptFailures::sum);
    metrics.counter("relay_header_timeouts", "Connections closed for not finishing a request head in time", counters.headerTimeouts::sum);
    metrics.counter("relay_malformed_request_heads", "Request heads refused as unreadable (400, 414, 431, 505)", counters.malformedHeads::sum);
    metrics.counter("relay_idle_timeouts", "Access API connections closed for being idle: nothing read and nothing of an answer written for the idle timeout", counters.idleTimeouts::sum);
    metrics.counter("relay_oversized_bodies", "Access API request bodies refused with 413 for being over 64 KiB", counters.oversizedBodies::sum);
    metrics.counter("relay_pipeline_overflows", "Access API connections closed for pipelining more than 16 requests ahead", counters.pipelineOverflows::sum);
    metrics.counter("relay_connection_limit_reached", "Times the client ports reached max-connections: each stop of accepting, and each connection accepted at the limit and closed", counters.limitReached::sum);
    EventLoopDelay.watch(
        ports.loops(),
        metrics.secondsHistogram(
            "relay_event_loop_delay_seconds",
            "How late the client ports' event loops ran a probe due every " + EventLoopDelay.PERIOD_MS + " ms",
            0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5));
  }

  /**
   * The drain on SIGTERM or a cluster Leave: /ready false at once; after the drain delay the
   * servers stop accepting (each port's unbind, registered by {@code HttpServer} in the same
   * phase) and every relay connection is closed with 1001, spread over the drain spread; then the
   * node leaves the cluster and exits.
   */
  private static void registerDrain(
      ActorSystem<Void> system, RelayNode.Settings settings, RelayServices services, NodeState state) {
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    shutdown.addTask(
        CoordinatedShutdown.PhaseBeforeServiceUnbind(),
        "relay-not-ready",
        () -> {
          state.startDraining();
          LOG.info("draining: not ready; closing connections in {}", settings.node().drainDelay());
          return Patterns.after(
              settings.node().drainDelay(),
              system.classicSystem().scheduler(),
              system.executionContext(),
              () -> CompletableFuture.completedFuture(Done.getInstance()));
        });
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceUnbind(),
        "relay-close-connections",
        () -> {
          Duration spread = settings.relay().drainSpread();
          LOG.info("draining: closing {} connections with 1001 over {}", services.directory().size(), spread);
          return Ask.<TopicRegistry.Command, Done>ask(
                  services.registry(), TopicRegistry.Drain::new, spread.plus(RelayNode.PHASE_MARGIN), system)
              .thenCompose(done -> services.directory().whenEmpty())
              .thenApply(empty -> Done.getInstance());
        });
  }
}
