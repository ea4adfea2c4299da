package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import io.relay.ws.CloseCodes;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * One topic actor on its own, its registry a probe: joins and what they relay, a join refused for a
 * booking denied since its admission, leaving, and the four ways the actor closes connections (a denied booking, an expired token, the topic moving,
 * the node draining).
 */
class TopicActorTest {
  private static final Duration LEEWAY = Duration.ofSeconds(1);
  private static final ActorTestKit KIT =
      ActorTestKit.create("topic-actor", TestClusterConfig.with(Map.of("relay.attach-timeout", "1s", "relay.token-leeway", LEEWAY.toMillis() + "ms")));
  private static final TestConnections CONNECTIONS = new TestConnections(KIT, "test-node");
  /** Topics whose attach deadline is far off: a connection they drop within a test's waits was dropped for another reason. */
  private static final ActorTestKit FAR_DEADLINE =
      ActorTestKit.create("topic-actor-far-deadline", TestClusterConfig.with(Map.of("relay.attach-timeout", "60s")));
  private static final TestConnections FAR = new TestConnections(FAR_DEADLINE, "test-node");

  private final TestProbe<TopicRegistry.Command> registry = KIT.createTestProbe();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
    FAR_DEADLINE.shutdownTestKit();
  }

  private ActorRef<TopicActor.Command> topic(String name) {
    return KIT.spawn(TopicActor.create(name, registry.ref(), CONNECTIONS.context));
  }

  private TestConnections.Client join(ActorRef<TopicActor.Command> topic, Connection connection) {
    TestProbe<TopicActor.JoinResult> reply = KIT.createTestProbe();
    topic.tell(new TopicActor.Join(connection, reply.ref()));
    return TestConnections.run(reply.receiveMessage(TestConnections.WAIT));
  }

  @Test
  void aWritersMessagesReachEveryOtherReaderButNotItselfOrAParticipantWithoutRead() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("relay");
    TestConnections.Client writer = join(topic, TestConnections.connection("relay", "w", "read", "write"));
    TestConnections.Client reader = join(topic, TestConnections.connection("relay", "r", "read"));
    TestConnections.Client writeOnly = join(topic, TestConnections.connection("relay", "o", "write"));
    writer.sendText("hello");
    assertEquals("hello", reader.nextText());
    assertTrue(writer.silentFor(Duration.ofMillis(300)), "a writer does not get its own message");
    assertTrue(writeOnly.silentFor(Duration.ofMillis(100)), "a participant without read gets nothing");
    reader.sendText("ignored: no write scope");
    assertTrue(writer.silentFor(Duration.ofMillis(300)), "a reader's messages are dropped");
  }

  @Test
  void theLastToLeaveTellsTheRegistryTheTopicIsIdleWithItsJoinCount() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("leave");
    TestConnections.Client first = join(topic, TestConnections.connection("leave", "a", "read", "write"));
    TestConnections.Client second = join(topic, TestConnections.connection("leave", "b", "read"));
    first.vanish();
    registry.expectNoMessage(Duration.ofMillis(300));
    second.vanish();
    TopicRegistry.TopicIdle idle = registry.expectMessageClass(TopicRegistry.TopicIdle.class, TestConnections.WAIT);
    assertEquals("leave", idle.topic());
    assertEquals(2, idle.joins(), "the registry compares this with the joins it sent");
    assertEquals(topic, idle.actor());
  }

  @Test
  void aDeniedBookingsConnectionsCloseWith4003AndOthersStay() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("deny");
    TestConnections.Client denied = join(topic, TestConnections.connection("deny", "cancelled", "read", "write"));
    TestConnections.Client kept = join(topic, TestConnections.connection("deny", "kept", "read", "write"));
    TestConnections.Client third = join(topic, TestConnections.connection("deny", "third", "read"));
    double closed4003 = CONNECTIONS.metrics.connectionsClosed.labelValues("4003").get();
    topic.tell(new TopicActor.CloseBooking("cancelled"));
    assertEquals(CloseCodes.BOOKING_DENIED, denied.nextCloseCode());
    kept.sendText("still here");
    assertEquals("still here", third.nextText(), "the other bookings' connections still relay");
    assertTrue(denied.silentFor(Duration.ofMillis(200)), "nothing reaches the denied connection after its close");
    denied.vanish(); // its client goes, as the close asks
    Await.until(
        "the denied connection is counted under 4003", TestConnections.WAIT,
        () -> CONNECTIONS.metrics.connectionsClosed.labelValues("4003").get() == closed4003 + 1);
  }

  @Test
  void aJoinOfABookingDeniedSinceItsAdmissionCheckedIsRefusedWith403() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("late-deny");
    TestConnections.Client other = join(topic, TestConnections.connection("late-deny", "other", "read"));
    CONNECTIONS.denied.add("late");
    double deniedBefore = CONNECTIONS.metrics.codesRefused.labelValues("denied").get();
    try {
      TestProbe<TopicActor.JoinResult> reply = KIT.createTestProbe();
      topic.tell(new TopicActor.Join(TestConnections.connection("late-deny", "late", "read", "write"), reply.ref()));
      TopicActor.Refused refused = reply.expectMessageClass(TopicActor.Refused.class, TestConnections.WAIT);
      assertEquals(403, refused.status(), "the denied booking's upgrade is refused before it is answered");
      assertEquals(deniedBefore + 1, CONNECTIONS.metrics.codesRefused.labelValues("denied").get(), "counted as a code refused for a denied booking");
      TestConnections.Client writer = join(topic, TestConnections.connection("late-deny", "writer", "write"));
      writer.sendText("for the topic's members");
      assertEquals("for the topic's members", other.nextText(), "the topic goes on relaying to its members");
      other.vanish();
      writer.vanish();
      TopicRegistry.TopicIdle idle = registry.expectMessageClass(TopicRegistry.TopicIdle.class, TestConnections.WAIT);
      assertEquals(3, idle.joins(), "the refused join counts among the joins the registry sent");
    } finally {
      CONNECTIONS.denied.remove("late");
    }
  }

  @Test
  void aTopicWhoseOnlyJoinWasRefusedForADeniedBookingGoesIdle() {
    ActorRef<TopicActor.Command> topic = topic("only-denied");
    CONNECTIONS.denied.add("gone");
    try {
      TestProbe<TopicActor.JoinResult> reply = KIT.createTestProbe();
      topic.tell(new TopicActor.Join(TestConnections.connection("only-denied", "gone", "read"), reply.ref()));
      assertEquals(403, reply.expectMessageClass(TopicActor.Refused.class, TestConnections.WAIT).status());
      TopicRegistry.TopicIdle idle = registry.expectMessageClass(TopicRegistry.TopicIdle.class, TestConnections.WAIT);
      assertEquals(1, idle.joins(), "idle after its one join, so the registry stops it and forgets the topic");
    } finally {
      CONNECTIONS.denied.remove("gone");
    }
  }

  @Test
  void aConnectionWhoseTokenExpiresClosesWith4000OnceTheClockSkewAllowanceHasPassed() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("expiry");
    double closed4000 = CONNECTIONS.metrics.connectionsClosed.labelValues("4000").get();
    Instant expiry = Instant.now().plusMillis(500);
    TestConnections.Client expiring = join(topic, TestConnections.connection("expiry", "b", expiry, "read"));
    assertEquals(CloseCodes.TOKEN_EXPIRED, expiring.nextCloseCode());
    assertFalse(Instant.now().isBefore(expiry.plus(LEEWAY)), "closed once the allowance after the token's exp was over, not before");
    expiring.vanish();
    Await.until(
        "the expired connection is counted under 4000", TestConnections.WAIT,
        () -> CONNECTIONS.metrics.connectionsClosed.labelValues("4000").get() == closed4000 + 1);
  }

  @Test
  void aConnectionWhoseTokenExpiresInAYearOpensRelaysAndLeavesTheTopicOpenToOthers() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("long-lived");
    Instant nextYear = Instant.now().plus(Duration.ofDays(365));
    TestConnections.Client device = join(topic, TestConnections.connection("long-lived", "device", nextYear, "read", "write"));
    TestConnections.Client user = join(topic, TestConnections.connection("long-lived", "user", "read", "write"));
    device.sendText("from a device whose token lives a year");
    assertEquals("from a device whose token lives a year", user.nextText());
    user.sendText("and back");
    assertEquals("and back", device.nextText());
  }

  @Test
  void anExpiryFurtherOffThanTheLongestWaitIsCheckedAgainAfterIt() {
    Instant now = Instant.parse("2026-12-05T12:00:00Z");
    assertEquals(TopicActor.LONGEST_EXPIRY_WAIT, TopicActor.untilExpiryCheck(now, now.plus(Duration.ofDays(3650))));
    assertEquals(Duration.ofHours(5), TopicActor.untilExpiryCheck(now, now.plus(Duration.ofHours(5))));
    assertEquals(Duration.ZERO, TopicActor.untilExpiryCheck(now, now.minusSeconds(1)));
  }

  @Test
  void closeAllClosesEveryConnectionWithItsCodeAsEvictionAndDrainDo() throws Exception {
    ActorRef<TopicActor.Command> moved = topic("moved");
    TestConnections.Client a = join(moved, TestConnections.connection("moved", "a", "read"));
    TestConnections.Client b = join(moved, TestConnections.connection("moved", "b", "read", "write"));
    moved.tell(new TopicActor.CloseAll(CloseCodes.TOPIC_MOVED, "topic moved to another node"));
    assertEquals(CloseCodes.TOPIC_MOVED, a.nextCloseCode());
    assertEquals(CloseCodes.TOPIC_MOVED, b.nextCloseCode());
    ActorRef<TopicActor.Command> drained = topic("drained");
    TestConnections.Client c = join(drained, TestConnections.connection("drained", "c", "read"));
    drained.tell(new TopicActor.CloseAll(CloseCodes.GOING_AWAY, "node draining"));
    assertEquals(CloseCodes.GOING_AWAY, c.nextCloseCode());
  }

  @Test
  void aJoinWhoseUpgradeNeverStartsItsStreamIsDroppedAtTheAttachDeadline() {
    ActorRef<TopicActor.Command> topic = topic("unattached");
    TestProbe<TopicActor.JoinResult> reply = KIT.createTestProbe();
    topic.tell(new TopicActor.Join(TestConnections.connection("unattached", "a", "read"), reply.ref()));
    reply.expectMessageClass(TopicActor.Joined.class, TestConnections.WAIT);
    // the flow is never run: after relay.attach-timeout (1 s here) the connection is forgotten
    TopicRegistry.TopicIdle idle = registry.expectMessageClass(TopicRegistry.TopicIdle.class, TestConnections.WAIT);
    assertEquals("unattached", idle.topic());
  }

  @Test
  void aJoinWhoseClientLeftBeforeItsUpgradeIsDroppedAtOnceAndTakesNoFrames() throws Exception {
    TestProbe<TopicRegistry.Command> farRegistry = FAR_DEADLINE.createTestProbe();
    ActorRef<TopicActor.Command> topic = FAR_DEADLINE.spawn(TopicActor.create("abandoned", farRegistry.ref(), FAR.context));
    TestProbe<TopicActor.JoinResult> replies = FAR_DEADLINE.createTestProbe();
    topic.tell(new TopicActor.Join(TestConnections.connection("abandoned", "w", "read", "write"), replies.ref()));
    TestConnections.Client writer = TestConnections.run(replies.receiveMessage(TestConnections.WAIT));
    Connection gone = TestConnections.connection("abandoned", "a", "read");
    topic.tell(new TopicActor.Join(gone, replies.ref()));
    replies.expectMessageClass(TopicActor.Joined.class, TestConnections.WAIT).handler().abandon();
    assertTrue(gone.outbound().isDisposed(), "its queue takes nothing from now on");
    writer.sendText("after the client left");
    Await.until("the topic drops it long before its attach deadline", TestConnections.WAIT, () -> !FAR.directory.connections().contains(gone));
    assertEquals(0, gone.outbound().size(), "no frame was queued for it");
  }

  @Test
  void aJoinWhoseAdmissionWasGivenUpIsNotKeptWhetherItArrivesAfterThatOrBefore() {
    TestProbe<TopicRegistry.Command> farRegistry = FAR_DEADLINE.createTestProbe();
    ActorRef<TopicActor.Command> topic = FAR_DEADLINE.spawn(TopicActor.create("given-up", farRegistry.ref(), FAR.context));
    TestProbe<TopicActor.JoinResult> replies = FAR_DEADLINE.createTestProbe();
    Connection late = TestConnections.connection("given-up", "late", "read");
    late.abandonAdmission(); // its join unanswered in time: its client was refused with 503
    topic.tell(new TopicActor.Join(late, replies.ref()));
    Connection joined = TestConnections.connection("given-up", "joined", "read");
    topic.tell(new TopicActor.Join(joined, replies.ref()));
    replies.expectMessageClass(TopicActor.Joined.class, TestConnections.WAIT);
    assertTrue(FAR.directory.connections().contains(joined) && !FAR.directory.connections().contains(late), "the topic took the one not given up");
    joined.abandonAdmission(); // given up just after the topic took it
    Await.until("the topic drops it long before its attach deadline", TestConnections.WAIT, () -> !FAR.directory.connections().contains(joined));
    assertTrue(joined.outbound().isDisposed(), "its queue takes nothing from now on");
    assertEquals(1, farRegistry.expectMessageClass(TopicRegistry.TopicIdle.class, TestConnections.WAIT).joins(), "idle after the join not taken");
    assertEquals(2, farRegistry.expectMessageClass(TopicRegistry.TopicIdle.class, TestConnections.WAIT).joins(), "idle again, both joins counted");
  }

  @Test
  void aTokenThatExpiresAtTheEndOfTimeJoinsAndItsConnectionStays() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("forever");
    TestConnections.Client writer = join(topic, TestConnections.connection("forever", "w", Instant.MAX, "write"));
    TestConnections.Client reader = join(topic, TestConnections.connection("forever", "r", Instant.MAX, "read"));
    writer.sendText("still open");
    assertEquals("still open", reader.nextText());
  }

  @Test
  void aStopIsIgnoredWhileTheTopicHasConnections() throws Exception {
    ActorRef<TopicActor.Command> topic = topic("stop");
    TestConnections.Client client = join(topic, TestConnections.connection("stop", "a", "read", "write"));
    TestConnections.Client other = join(topic, TestConnections.connection("stop", "b", "read"));
    topic.tell(TopicActor.Stop.INSTANCE);
    client.sendText("after a stop");
    assertEquals("after a stop", other.nextText(), "the topic still relays");
  }
}
