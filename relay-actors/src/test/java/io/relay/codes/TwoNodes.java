package io.relay.codes;

import io.relay.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;

/** Two test kits joined into one cluster, for the code store's tests across nodes. */
final class TwoNodes {
  private TwoNodes() {}

  /** Joins {@code second} to {@code first} and waits until each sees both Up. */
  static void join(ActorTestKit first, ActorTestKit second, Duration timeout) {
    Cluster one = Cluster.get(first.system());
    one.manager().tell(Join.create(one.selfMember().address()));
    Cluster.get(second.system()).manager().tell(Join.create(one.selfMember().address()));
    for (Cluster node : List.of(one, Cluster.get(second.system()))) {
      Await.until("both nodes are Up as seen by " + node.selfMember().address(), timeout, () ->
          StreamSupport.stream(node.state().getMembers().spliterator(), false).filter(m -> m.status() == MemberStatus.up()).count() == 2);
    }
  }
}
