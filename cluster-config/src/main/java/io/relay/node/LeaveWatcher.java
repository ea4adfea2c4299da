package io.relay.node;

import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * Starts the node's drain as soon as it is asked to leave the cluster (for example through the
 * management API), rather than when the leave has completed.
 */
final class LeaveWatcher {
  private LeaveWatcher() {}

  static Behavior<ClusterEvent.MemberLeft> create() {
    return Behaviors.setup(
        context -> {
          Cluster cluster = Cluster.get(context.getSystem());
          cluster.subscriptions().tell(Subscribe.create(context.getSelf(), ClusterEvent.MemberLeft.class));
          return Behaviors.receiveMessage(
              left -> {
                if (left.member().uniqueAddress().equals(cluster.selfMember().uniqueAddress())) {
                  context.getLog().info("asked to leave the cluster: draining");
                  CoordinatedShutdown.get(context.getSystem()).run(CoordinatedShutdown.clusterLeavingReason());
                }
                return Behaviors.same();
              });
        });
  }
}
