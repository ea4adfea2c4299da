package io.relay.node;

import io.relay.http.AdminGuard;
import io.relay.deny.DenyListStatus;
import io.relay.metrics.RelayMetrics;
import java.net.InetSocketAddress;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * Per-node state that Pekko Management's health checks and routes need: readiness flags, bound
 * addresses, the metrics registry and who may write to the cluster. One instance per actor system.
 */
public final class NodeState implements Extension {
  private static final ExtensionId<NodeState> ID =
      new ExtensionId<>() {
        @Override
        public NodeState createExtension(ActorSystem<?> system) {
          return new NodeState();
        }
      };

  private final RelayMetrics metrics = new RelayMetrics();
  private final AtomicBoolean serversBound = new AtomicBoolean();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final DenyListStatus denyList = new DenyListStatus();
  private volatile InetSocketAddress accessAddress;
  private volatile InetSocketAddress relayAddress;
  private volatile Optional<AdminGuard> clusterWriters;

  public static NodeState get(ActorSystem<?> system) {
    return system.registerExtension(ID);
  }

  public RelayMetrics metrics() {
    return metrics;
  }

  /**
   * Whether every server this node runs is bound, it has read the replicated deny list from a
   * majority (and not lost sight of a majority since), and it is not draining.
   */
  public boolean isServing() {
    return serversBound.get() && denyList.isRead() && !draining.get();
  }

  /** Whether the deny list has been read from a majority, and its size; written by the deny list actor. */
  public DenyListStatus denyList() {
    return denyList;
  }

  public boolean isDraining() {
    return draining.get();
  }

  void serversBound(InetSocketAddress access, InetSocketAddress relay) {
    this.accessAddress = access;
    this.relayAddress = relay;
    serversBound.set(true);
  }

  /** Marks the node as draining; true only for the first call. */
  boolean startDraining() {
    return draining.compareAndSet(false, true);
  }

  /** Sets who may write to the cluster through the management port; before Pekko Management starts. */
  void allowClusterWrites(Optional<AdminGuard> writers) {
    this.clusterWriters = writers;
  }

  /** The check that cluster writes on the management port must pass, or empty when they are disabled. */
  Optional<AdminGuard> clusterWriters() {
    Optional<AdminGuard> writers = clusterWriters;
    if (writers == null) {
      throw new IllegalStateException("cluster writes were not configured before Pekko Management started");
    }
    return writers;
  }

  /** The access API's bound address, or null if this node does not run it. */
  public InetSocketAddress accessAddress() {
    return accessAddress;
  }

  /** The relay's bound address, or null if this node does not run it. */
  public InetSocketAddress relayAddress() {
    return relayAddress;
  }
}
