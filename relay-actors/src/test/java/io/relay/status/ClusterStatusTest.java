package io.relay.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relay.testing.TestClusterConfig;
import io.relay.topic.ClusterEvent;
import io.relay.topic.ConnectionReport;
import io.relay.topic.TopicRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Cluster-wide status on a one-node cluster whose registry is the test's: every part of a node's
 * answer is gathered, events in time order, and a relay member that does not answer in time is
 * named as missing rather than left out.
 */
class ClusterStatusTest {
  private static final Duration TIMEOUT = Duration.ofMillis(500);

  private ActorTestKit kit;
  private String self;

  @BeforeEach
  void start() {
    kit = ActorTestKit.create("status", TestClusterConfig.with(Map.of("pekko.cluster.roles", List.of("relay"))));
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    TestProbe<Object> probe = kit.createTestProbe();
    probe.awaitAssert(Duration.ofSeconds(10), () -> {
      assertEquals(MemberStatus.up(), cluster.selfMember().status(), "the node is Up");
      return null;
    });
    self = cluster.selfMember().address().toString();
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  private static ConnectionReport report(String topic) {
    ConnectionReport.Direction direction = new ConnectionReport.Direction(0, 0, 0);
    return new ConnectionReport(
        topic, "node", "b", true, false, "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z", "127.0.0.1", "test",
        List.of("read"), new ConnectionReport.Stats(direction, direction, 0));
  }

  /** A registry that answers every report request with {@code parts}. */
  private Behavior<TopicRegistry.Command> answering(List<TopicRegistry.NodeReport> parts) {
    return Behaviors.receiveMessage(
        command -> {
          if (command instanceof TopicRegistry.Report request) {
            parts.forEach(request.replyTo()::tell);
          }
          return Behaviors.same();
        });
  }

  private void register(Behavior<TopicRegistry.Command> registry) {
    ActorRef<TopicRegistry.Command> ref = kit.spawn(registry);
    TestProbe<Receptionist.Registered> registered = kit.createTestProbe();
    kit.system().receptionist().tell(Receptionist.register(TopicRegistry.STATUS_KEY, ref, registered.ref()));
    registered.receiveMessage();
    // the cluster receptionist lists a registration once it is in its replicated state
    TestProbe<Receptionist.Listing> listing = kit.createTestProbe();
    listing.awaitAssert(
        Duration.ofSeconds(10),
        () -> {
          kit.system().receptionist().tell(Receptionist.find(TopicRegistry.STATUS_KEY, listing.ref()));
          assertEquals(
              Set.of(ref), listing.receiveMessage().getServiceInstances(TopicRegistry.STATUS_KEY), "the receptionist lists the registry");
          return null;
        });
  }

  private ClusterStatus.Gathered gather() {
    ActorRef<ClusterStatus.Gather> status = kit.spawn(ClusterStatus.create(TIMEOUT));
    TestProbe<ClusterStatus.Gathered> reply = kit.createTestProbe();
    status.tell(new ClusterStatus.Gather(reply.ref()));
    return reply.receiveMessage(Duration.ofSeconds(5));
  }

  @Test
  void everyPartOfANodesAnswerIsGatheredWithItsEventsInTimeOrder() {
    ClusterEvent later = new ClusterEvent("2026-01-01T00:00:02Z", self, "claim", "b", "");
    ClusterEvent earlier = new ClusterEvent("2026-01-01T00:00:01Z", self, "claim", "a", "");
    register(
        answering(
            List.of(
                new TopicRegistry.NodeReport(self, List.of(report("a")), List.of(later, earlier), 0, 2),
                new TopicRegistry.NodeReport(self, List.of(report("b"), report("c")), List.of(), 1, 2))));
    ClusterStatus.Gathered gathered = gather();
    assertEquals(List.of("a", "b", "c"), gathered.reports().stream().map(ConnectionReport::topic).toList());
    assertEquals(List.of(earlier, later), gathered.events());
    assertEquals(List.of(), gathered.missingNodes());
  }

  @Test
  void aNodeThatSendsOnlySomeOfItsPartsInTimeIsNamedMissing() {
    register(answering(List.of(new TopicRegistry.NodeReport(self, List.of(report("a")), List.of(), 0, 2))));
    ClusterStatus.Gathered gathered = gather();
    assertEquals(List.of(self), gathered.missingNodes(), "the node's second part never came");
    assertEquals(List.of("a"), gathered.reports().stream().map(ConnectionReport::topic).toList(), "what did come is kept");
  }

  @Test
  void aRelayMemberWithoutARegistryIsNamedMissing() {
    ClusterStatus.Gathered gathered = gather();
    assertEquals(List.of(self), gathered.missingNodes());
    assertEquals(List.of(), gathered.reports());
  }
}
