package io.relay.node;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * Pekko Management readiness check: the node's servers are bound, it has the replicated deny list,
 * and it is not draining. Cluster membership (Up) is checked by Pekko Management's own
 * cluster-membership check beside it.
 */
public final class ReadinessCheck implements Supplier<CompletionStage<Boolean>> {
  private final NodeState state;

  public ReadinessCheck(ActorSystem system) {
    this.state = NodeState.get(Adapter.toTyped(system));
  }

  @Override
  public CompletionStage<Boolean> get() {
    return CompletableFuture.completedFuture(state.isServing());
  }
}
