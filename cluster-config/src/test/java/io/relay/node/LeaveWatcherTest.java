package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.Leave;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The node starts its drain as soon as it is asked to leave (the leave seen as this member turning
 * Leaving), and not when another member leaves.
 */
class LeaveWatcherTest {
  private static final Map<String, Object> NO_EXIT = Map.of("pekko.coordinated-shutdown.exit-jvm", "off");

  private ActorTestKit node;
  private ActorTestKit other;

  @AfterEach
  void stop() {
    if (other != null) {
      other.shutdownTestKit();
    }
    node.shutdownTestKit();
  }

  @Test
  void thisNodeTurningLeavingStartsTheDrain() {
    node = ActorTestKit.create("leave-watcher-test", TestClusterConfig.with(NO_EXIT));
    Cluster cluster = joinedAndUp(node, Cluster.get(node.system()));
    ActorRef<ClusterEvent.MemberLeft> watcher = node.spawn(LeaveWatcher.create(), "leave-watcher");
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(node.system());
    assertTrue(shutdown.getShutdownReason().isEmpty(), "nothing has started a shutdown yet");

    // what the cluster publishes when this member is asked to leave; the cluster itself is not
    // asked, so only the watcher can start the drain
    watcher.tell(new ClusterEvent.MemberLeft(cluster.selfMember().copy(MemberStatus.leaving())));

    Await.until("the node starts draining", Duration.ofSeconds(10), () -> shutdown.getShutdownReason().isPresent());
    assertEquals(CoordinatedShutdown.clusterLeavingReason(), shutdown.getShutdownReason().orElseThrow(), "the drain runs for the leaving reason");
  }

  @Test
  void anotherMemberLeavingLeavesThisNodeServing() {
    node = ActorTestKit.create("leave-watcher-test", TestClusterConfig.with(NO_EXIT));
    Cluster cluster = joinedAndUp(node, Cluster.get(node.system()));
    node.spawn(LeaveWatcher.create(), "leave-watcher");
    other = ActorTestKit.create("leave-watcher-test", TestClusterConfig.with(NO_EXIT));
    Cluster otherCluster = Cluster.get(other.system());
    otherCluster.manager().tell(Join.create(cluster.selfMember().address()));
    Await.until("the second member is Up", Duration.ofSeconds(20), () -> otherCluster.selfMember().status() == MemberStatus.up());

    cluster.manager().tell(Leave.create(otherCluster.selfMember().address()));

    Await.until("this node sees the other member gone", Duration.ofSeconds(30), () -> java.util.stream.StreamSupport.stream(cluster.state().getMembers().spliterator(), false).count() == 1
        && cluster.state().getUnreachable().isEmpty());
    assertTrue(CoordinatedShutdown.get(node.system()).getShutdownReason().isEmpty(), "this node is not draining");
  }

  private static Cluster joinedAndUp(ActorTestKit kit, Cluster cluster) {
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    Await.until(kit.system().name() + " is Up", Duration.ofSeconds(10), () -> cluster.selfMember().status() == MemberStatus.up());
    return cluster;
  }
}
