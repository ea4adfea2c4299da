package io.relay.node;

import io.relay.metrics.RelayMetrics;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * Per-node state that Pekko Management's health checks and routes need: readiness flags, bound
 * addresses and the metrics registry. One instance per actor system.
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
  private final AtomicBoolean replicasLoaded = new AtomicBoolean();
  private volatile InetSocketAddress accessAddress;
  private volatile InetSocketAddress relayAddress;

  public static NodeState get(ActorSystem<?> system) {
    return system.registerExtension(ID);
  }

  public RelayMetrics metrics() {
    return metrics;
  }

  /**
   * Whether every server this node runs is bound, it has read the replicated deny list, and it is
   * not draining.
   */
  public boolean isServing() {
    return serversBound.get() && replicasLoaded.get() && !draining.get();
  }

  void replicasLoaded() {
    replicasLoaded.set(true);
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

  /** The access API's bound address, or null if this node does not run it. */
  public InetSocketAddress accessAddress() {
    return accessAddress;
  }

  /** The relay's bound address, or null if this node does not run it. */
  public InetSocketAddress relayAddress() {
    return relayAddress;
  }
}
