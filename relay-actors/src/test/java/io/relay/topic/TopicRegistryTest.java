package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import io.relay.ws.CloseCodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The topic registry of one node on its own: its cluster channels are topics of the test's own
 * (what it announces is heard by a subscriber there, what other nodes say is published there) and
 * its clock is the test's. Claims and eviction, the hold-down, cancellations, the drain, and a
 * join racing the idle stop of its topic.
 */
class TopicRegistryTest {
  private static final String NODE = "pekko://relay@127.0.0.1:1";
  private static final String OTHER = "pekko://relay@127.0.0.1:2";
  private static final ActorTestKit KIT =
      ActorTestKit.create("topic-registry", TestClusterConfig.with(Map.of("relay.drain-spread", "200ms")));
  private static final TestConnections CONNECTIONS = new TestConnections(KIT, NODE);

  private static final AtomicLong CHANNELS = new AtomicLong();

  private final AtomicLong clock = new AtomicLong(1_000_000);
  /** What this node announces, as another node's subscriber hears it. */
  private final TestProbe<ClaimAnnouncement> heard = KIT.createTestProbe();
  private ActorRef<Topic.Command<ClaimAnnouncement>> claims;
  private ActorRef<TopicRegistry.Command> registry;

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  /** A registry on a fresh claims channel, once it has subscribed to it. */
  @BeforeEach
  void start() {
    long n = CHANNELS.incrementAndGet();
    claims = KIT.spawn(Topic.create(ClaimAnnouncement.class, "claims-" + n));
    claims.tell(Topic.subscribe(heard.ref()));
    registry = KIT.spawn(TopicRegistry.create(CONNECTIONS.context, claims, clock::get));
    awaitSubscribers(claims, 2);
  }

  private static void awaitSubscribers(ActorRef<? extends Topic.Command<?>> topic, int count) {
    TestProbe<Topic.TopicStats> stats = KIT.createTestProbe();
    stats.awaitAssert(
        TestConnections.WAIT,
        () -> {
          @SuppressWarnings("unchecked")
          ActorRef<Topic.Command<Object>> any = (ActorRef<Topic.Command<Object>>) (ActorRef<?>) topic;
          any.tell(Topic.getTopicStats(stats.ref()));
          assertEquals(count, stats.receiveMessage(TestConnections.WAIT).localSubscriberCount(), "subscribers of the channel");
          return null;
        });
  }

  private TopicActor.JoinResult joinResult(Connection connection) {
    TestProbe<TopicActor.JoinResult> reply = KIT.createTestProbe();
    registry.tell(new TopicRegistry.Join(connection, reply.ref()));
    return reply.receiveMessage(TestConnections.WAIT);
  }

  private TestConnections.Client join(String topic, String booking, String... scopes) {
    return TestConnections.run(joinResult(TestConnections.connection(topic, booking, scopes)));
  }

  /** The next claim this node announced (what the test published as another node's is passed over). */
  private Claim announced() {
    ClaimAnnouncement announcement = heard.receiveMessage(TestConnections.WAIT);
    while (announcement.node().equals(OTHER)) {
      announcement = heard.receiveMessage(TestConnections.WAIT);
    }
    assertEquals(NODE, announcement.node());
    assertEquals(1, announcement.claims().size());
    return announcement.claims().get(0);
  }

  @Test
  void aTopicsFirstJoinClaimsItAndAnnouncesTheClaimOnce() throws Exception {
    TestConnections.Client writer = join("lab", "a", "read", "write");
    Claim claim = announced();
    assertEquals(new Claim("lab", NODE, clock.get()), claim);
    TestConnections.Client reader = join("lab", "b", "read");
    heard.expectNoMessage(Duration.ofMillis(200));
    writer.sendText("through one topic actor");
    assertEquals("through one topic actor", reader.nextText());
  }

  @Test
  void aNewerClaimFromAnotherNodeEvictsWith4001AndHoldsTheTopicDownHere() throws Exception {
    TestConnections.Client client = join("moving", "a", "read", "write");
    Claim ours = announced();
    claims.tell(Topic.publish(new ClaimAnnouncement(OTHER, List.of(new Claim("moving", OTHER, ours.stamp() + 1)))));
    assertEquals(CloseCodes.TOPIC_MOVED, client.nextCloseCode());
    TopicActor.JoinResult held = joinResult(TestConnections.connection("moving", "b", "read"));
    assertTrue(held instanceof TopicActor.Refused refused && refused.status() == 503 && refused.retryAfter() != null, "held down: " + held);
    clock.addAndGet(Duration.ofSeconds(6).toMillis());
    TestConnections.run(joinResult(TestConnections.connection("moving", "c", "read")));
    assertTrue(announced().stamp() > ours.stamp() + 1, "a claim after the hold-down is newer than the one that won");
  }

  @Test
  void aDenyReachesTheConnectionsOfATopicEvictedAndStillClosingThemWith4003() throws Exception {
    Connection connection = TestConnections.connection("leaving", "cancelled", "read");
    TestConnections.Client client = TestConnections.run(joinResult(connection));
    Claim ours = announced();
    // its client reads nothing for now: the move's 4001 waits behind what it was sent
    Await.value("the channel takes nothing more", TestConnections.WAIT, client.served.eventLoop().submit(() -> client.served.unsafe().outboundBuffer().setUserDefinedWritability(1, false)));
    claims.tell(Topic.publish(new ClaimAnnouncement(OTHER, List.of(new Claim("leaving", OTHER, ours.stamp() + 1)))));
    Await.until("the eviction's close to be asked", TestConnections.WAIT, () -> connection.closeCode() == CloseCodes.TOPIC_MOVED);
    registry.tell(new TopicRegistry.CloseBooking("cancelled", true));
    Await.until("the deny's close to overtake the move's", TestConnections.WAIT, () -> connection.closeCode() == CloseCodes.BOOKING_DENIED);
    client.served.eventLoop().execute(() -> client.served.unsafe().outboundBuffer().setUserDefinedWritability(1, true));
    assertEquals(CloseCodes.BOOKING_DENIED, client.nextCloseCode(), "stop, not reconnect");
  }

  @Test
  void anOlderClaimFromAnotherNodeIsAnsweredByAnnouncingOursAgain() throws Exception {
    TestConnections.Client client = join("kept", "a", "read", "write");
    Claim ours = announced();
    claims.tell(Topic.publish(new ClaimAnnouncement(OTHER, List.of(new Claim("kept", OTHER, ours.stamp() - 1)))));
    assertEquals(ours, announced(), "the older claim loses: ours is announced again");
    assertTrue(client.silentFor(Duration.ofMillis(200)), "nothing closed the connection");
  }

  /** The node's recent events, as its report to the cluster's status carries them. */
  private List<ClusterEvent> events() {
    TestProbe<TopicRegistry.NodeReport> reply = KIT.createTestProbe();
    registry.tell(new TopicRegistry.Report(reply.ref()));
    return reply.receiveMessage(TestConnections.WAIT).events();
  }

  @Test
  void aDeniedBookingsConnectionsCloseWith4003AndAnAnnouncedDenyIsRecorded() throws Exception {
    TestConnections.Client denied = join("cancel", "cancelled", "read");
    TestConnections.Client writer = join("cancel", "kept", "read", "write");
    TestConnections.Client reader = join("cancel", "other", "read");
    registry.tell(new TopicRegistry.CloseBooking("cancelled", true));
    assertEquals(CloseCodes.BOOKING_DENIED, denied.nextCloseCode());
    writer.sendText("after the deny");
    assertEquals("after the deny", reader.nextText());
    assertTrue(
        events().stream().anyMatch(e -> e.kind().equals("deny") && e.subject().equals("cancelled")),
        "the announced deny is among the node's recent events: " + events());
    registry.tell(new TopicRegistry.CloseBooking("found-in-the-list", false));
    assertTrue(events().stream().noneMatch(e -> e.subject().equals("found-in-the-list")), "a deny found in the list is not recorded again");
  }

  @Test
  void aDrainClosesEveryTopicWith1001AnswersWhenItHasGoneThroughThemAllAndRefusesLaterJoins() throws Exception {
    TestConnections.Client a = join("drain-a", "a", "read");
    TestConnections.Client b = join("drain-b", "b", "read");
    TestProbe<Done> done = KIT.createTestProbe();
    registry.tell(new TopicRegistry.Drain(done.ref()));
    assertEquals(CloseCodes.GOING_AWAY, a.nextCloseCode());
    assertEquals(CloseCodes.GOING_AWAY, b.nextCloseCode());
    done.expectMessage(TestConnections.WAIT, Done.getInstance());
    // admissions that passed their check before the drain began, joining after it: nothing would close them
    for (String topic : List.of("drain-a", "drain-c")) {
      TopicActor.JoinResult late = joinResult(TestConnections.connection(topic, "late", "read"));
      assertTrue(late instanceof TopicActor.Refused r && r.status() == 503, topic + ": a join after the drain is refused, not left open: " + late);
    }
  }

  /**
   * A node's topics close over the drain spread (200 ms here) whatever their number: not all in
   * one instant when each one's share is under a millisecond, nor one per tick of Pekko's
   * scheduler (10 ms) when it is over, which made a drain of a thousand topics take ten seconds
   * or more, past its deadline.
   */
  @Test
  void aDrainOfTopicsDueUnderAMillisecondApartDoesNotCloseThemAllAtOnce() throws Exception {
    drainKeepsToTheSpread(250);
  }

  @Test
  void aDrainOfTopicsDueOverAMillisecondApartIsNotPacedByTheSchedulersTick() throws Exception {
    drainKeepsToTheSpread(150);
  }

  private void drainKeepsToTheSpread(int topics) throws Exception {
    List<TestConnections.Client> clients = new ArrayList<>();
    for (int i = 0; i < topics; i++) {
      clients.add(join("spread-" + i, "p" + i, "read"));
    }
    TestProbe<Done> done = KIT.createTestProbe();
    long start = System.nanoTime();
    registry.tell(new TopicRegistry.Drain(done.ref()));
    done.expectMessage(TestConnections.WAIT, Done.getInstance());
    long millis = (System.nanoTime() - start) / 1_000_000;
    assertTrue(millis < 1_000, topics + " topics: the drain keeps to its 200 ms spread: " + millis + " ms");
    long first = Long.MAX_VALUE;
    long last = 0;
    for (TestConnections.Client client : clients) {
      assertEquals(CloseCodes.GOING_AWAY, client.nextCloseCode()); // the only frame each client gets
      first = Math.min(first, client.lastArrivalNanos());
      last = Math.max(last, client.lastArrivalNanos());
    }
    long spreadMillis = (last - first) / 1_000_000;
    assertTrue(spreadMillis >= 100, topics + " topics: the closes arrive spread over the 200 ms spread, not at once: " + spreadMillis + " ms apart");
  }

  @Test
  void aJoinRightAfterItsTopicsLastLeaveIsServedWhicheverArrivesFirst() throws Exception {
    // the last leave makes the topic actor report idle; a join sent meanwhile must reach a live
    // topic actor (the same one, if it has not stopped, or a new one), never a stopping one
    for (int round = 0; round < 20; round++) {
      String topic = "race-" + round;
      join(topic, "first", "read", "write").vanish();
      TestConnections.Client reader = join(topic, "reader", "read");
      TestConnections.Client writer = join(topic, "writer", "read", "write");
      writer.sendText("round " + round);
      assertEquals("round " + round, reader.nextText(), "round " + round + ": the new participants meet on one topic actor");
    }
  }

  @Test
  void aFaultInOneJoinRefusesItWith500AndTheTopicsOtherConnectionsGoOn() throws Exception {
    TestConnections.Client reader = join("fault-in-a-join", "reader", "read");
    TestConnections.Client writer = join("fault-in-a-join", "writer", "read", "write");
    double faults = CONNECTIONS.metrics.topicFaults.get();
    CONNECTIONS.faultyBookings.add("faulty");
    try {
      TopicActor.JoinResult refused = joinResult(TestConnections.connection("fault-in-a-join", "faulty", "read"));
      assertTrue(refused instanceof TopicActor.Refused r && r.status() == 500, "the faulty join is refused with 500: " + refused);
    } finally {
      CONNECTIONS.faultyBookings.remove("faulty");
    }
    writer.sendText("after a fault in another's join");
    assertEquals("after a fault in another's join", reader.nextText());
    assertEquals(faults + 1, CONNECTIONS.metrics.topicFaults.get(), "the fault is counted");
  }

  @Test
  void aTopicActorThatFailsIsReplacedAndItsConnectionsCloseWith1011() throws Exception {
    String topic = "faulty-room";
    TestConnections.Client reader = join(topic, "reader", "read");
    TestConnections.Client writer = join(topic, "writer", "read", "write");
    TestConnections.Client leaver = join(topic, "leaver", "read");
    assertEquals(topic, announced().topic());
    double faults = CONNECTIONS.metrics.topicFaults.get();
    double closed1011 = CONNECTIONS.metrics.connectionsClosed.labelValues("1011").get();
    CONNECTIONS.faultyRooms.add(topic);
    try {
      leaver.vanish(); // the topic actor fails as it publishes its readers without the leaver
      assertEquals(CloseCodes.INTERNAL_ERROR, reader.nextCloseCode());
      assertEquals(CloseCodes.INTERNAL_ERROR, writer.nextCloseCode());
    } finally {
      CONNECTIONS.faultyRooms.remove(topic);
    }
    Await.until(
        "the failed topic's connections to leave the node's directory",
        TestConnections.WAIT,
        () -> CONNECTIONS.directory.connections().stream().noneMatch(c -> c.grant().topic().equals(topic)));
    assertEquals(faults + 1, CONNECTIONS.metrics.topicFaults.get(), "the failure is counted");
    assertEquals(closed1011 + 2, CONNECTIONS.metrics.connectionsClosed.labelValues("1011").get(), "its two connections are counted under 1011");
    assertTrue(
        events().stream().anyMatch(e -> e.kind().equals("failure") && e.subject().equals(topic)),
        "the failure is among the node's recent events: " + events());
    // the topic is served again, by a new topic actor that claims it again
    TestConnections.Client back = join(topic, "reader", "read");
    TestConnections.Client again = join(topic, "writer", "read", "write");
    assertEquals(topic, announced().topic());
    again.sendText("after the failure");
    assertEquals("after the failure", back.nextText());
    // a topic actor stopped when idle is no failure
    back.vanish();
    again.vanish();
    Await.until(
        "the topic's last connections to leave", TestConnections.WAIT, () -> CONNECTIONS.directory.connections().stream().noneMatch(c -> c.grant().topic().equals(topic)));
    join(topic, "later", "read");
    assertEquals(topic, announced().topic(), "a later join claims the topic again: its idle actor had stopped");
    assertEquals(faults + 1, CONNECTIONS.metrics.topicFaults.get(), "an idle stop is not counted as a fault");
  }

  @Test
  void anEvictedTopicActorThatFailsAfterItWasToldToStopIsAFaultToo() throws Exception {
    String topic = "evicted-then-faulty";
    TestConnections.Client reader = join(topic, "reader", "read");
    Claim ours = announced();
    ActorRef<TopicActor.Command> evicted =
        CONNECTIONS.directory.connections().stream().filter(c -> c.grant().topic().equals(topic)).findFirst().orElseThrow().topicActor();
    claims.tell(Topic.publish(new ClaimAnnouncement(OTHER, List.of(new Claim(topic, OTHER, ours.stamp() + 1)))));
    assertEquals(CloseCodes.TOPIC_MOVED, reader.nextCloseCode());
    double faults = CONNECTIONS.metrics.topicFaults.get();
    CONNECTIONS.faultyRooms.add(topic);
    try {
      // the registry tells the evicted incarnation to stop while its reader is still there, so it
      // goes on (events() answers once the registry has sent the stop); then it fails as it
      // publishes its readers without the one that left
      registry.tell(new TopicRegistry.TopicIdle(topic, evicted, 0));
      events();
      reader.vanish();
      Await.until("the evicted topic actor's failure to be counted", TestConnections.WAIT, () -> CONNECTIONS.metrics.topicFaults.get() == faults + 1);
    } finally {
      CONNECTIONS.faultyRooms.remove(topic);
    }
    assertTrue(
        events().stream().anyMatch(e -> e.kind().equals("failure") && e.subject().equals(topic)),
        "the failure is among the node's recent events: " + events());
  }

  @Test
  void aReportListsThisNodesConnections() {
    join("report", "a", "read");
    TestProbe<TopicRegistry.NodeReport> reply = KIT.createTestProbe();
    registry.tell(new TopicRegistry.Report(reply.ref()));
    TopicRegistry.NodeReport report = reply.receiveMessage(TestConnections.WAIT);
    assertEquals(NODE, report.node());
    assertTrue(report.connections().stream().anyMatch(c -> c.topic().equals("report")), "the report lists the connection: " + report);
    assertTrue(report.events().stream().anyMatch(e -> e.kind().equals("claim") && e.subject().equals("report")), "and the claim: " + report.events());
  }
}
