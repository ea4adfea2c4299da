package io.relay.deny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.RelaySettings;
import io.relay.testing.TestClusterConfig;
import io.relay.topic.TopicRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.ActorIdentity;
import org.apache.pekko.actor.ActorSelection;
import org.apache.pekko.actor.Identify;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The sharded deny list on a one-node cluster: deny, allow, the expiry sweep, its capacity, which
 * replicated map holds a booking, that it answers nothing until it has read the maps, and that a
 * change is applied ahead of replication and answered once every member has confirmed it, and that
 * the majority read of a joining node keeps what its replica took meanwhile (a second node in the
 * same JVM).
 */
class DenyListTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long NOW = 1_800_000_000L;

  private final AtomicLong clock = new AtomicLong(NOW);
  private final DenyListStatus status = new DenyListStatus();
  private ActorTestKit kit;
  private TestProbe<TopicRegistry.Command> registry;
  private TestProbe<Cancel> cancelled;
  private ActorRef<Topic.Command<Cancel>> cancels;
  private ActorRef<DenyList.Command> denyList;
  private ActorTestKit second;

  /** Starts a one-node cluster (joined unless {@code join} is false) running a deny list of {@code capacity}. */
  private void start(DenyCapacity capacity, boolean join) {
    start(capacity, join, config());
  }

  private void start(DenyCapacity capacity, boolean join, Config config) {
    kit = ActorTestKit.create("deny-list-test", config);
    registry = kit.createTestProbe();
    cancelled = kit.createTestProbe();
    cancels = kit.spawn(Topic.create(Cancel.class, "relay-cancels"));
    cancels.tell(Topic.subscribe(cancelled.ref()));
    denyList = kit.spawn(create(kit, capacity, registry.ref(), cancels, status), "deny-list");
    if (join) {
      join();
    }
  }

  /** A node's configuration: it confirms changes, as every node of this build does. */
  private static Config config() {
    return TestClusterConfig.with(
        Map.of(
            "relay.deny-sweep-interval", "200ms",
            "relay.replication-timeout", "2s",
            "pekko.cluster.roles", List.of(DenyList.CONFIRMS_CHANGES)));
  }

  private Behavior<DenyList.Command> create(
      ActorTestKit on, DenyCapacity capacity, ActorRef<TopicRegistry.Command> registry,
      ActorRef<Topic.Command<Cancel>> cancels, DenyListStatus status) {
    return DenyList.create(RelaySettings.create(on.system().settings().config()), capacity, registry, cancels, clock::get, status);
  }

  private void join() {
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    awaitRead();
  }

  private void awaitRead() {
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertTrue(status.isRead(), "the deny list has been read");
      return null;
    });
  }

  @AfterEach
  void stop() {
    if (second != null) {
      second.shutdownTestKit();
    }
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  private DenyList.Outcome set(String bookingId, boolean denied, long expiresAt) {
    TestProbe<DenyList.Outcome> reply = kit.createTestProbe();
    denyList.tell(new DenyList.Set(bookingId, denied, expiresAt, reply.ref()));
    return reply.expectMessageClass(DenyList.Outcome.class, WAIT);
  }

  /** The booking's verdict as the node's servers read it: from the replica, without asking the actor. */
  private DenyList.Verdict check(String bookingId) {
    return status.verdict(bookingId);
  }

  @SuppressWarnings("unchecked")
  private List<String> list(boolean denied) {
    TestProbe<List<String>> reply = kit.createTestProbe();
    denyList.tell(new DenyList.ListBookings(denied, reply.ref()));
    return reply.expectMessageClass(List.class, WAIT);
  }

  @Test
  void aDenyIsCheckedListedAnnouncedAndUndoneByAnAllow() {
    start(DenyCapacity.DEFAULT, true);
    assertEquals(DenyList.Verdict.ALLOWED, check("b1"), "nothing is denied at first");
    assertEquals(DenyList.Outcome.STORED, set("b1", true, NOW + 100));
    assertEquals(DenyList.Verdict.DENIED, check("b1"));
    assertEquals(DenyList.Verdict.ALLOWED, check("b2"), "other bookings stay allowed");
    assertEquals(new TopicRegistry.CloseBooking("b1", false), registry.expectMessageClass(TopicRegistry.CloseBooking.class, WAIT));
    assertEquals(new Cancel("b1"), cancelled.expectMessageClass(Cancel.class, WAIT), "the deny is announced on the cancel channel");
    assertEquals(
        new TopicRegistry.CloseBooking("b1", true),
        registry.expectMessageClass(TopicRegistry.CloseBooking.class, WAIT),
        "the announcement is heard here too, as on every node, and recorded");
    assertEquals(List.of("b1"), list(true));
    assertEquals(1, status.entries());

    assertEquals(DenyList.Outcome.STORED, set("b1", false, NOW + 100));
    assertEquals(DenyList.Verdict.ALLOWED, check("b1"));
    assertEquals(List.of(), list(true));
    assertEquals(List.of("b1"), list(false));
    cancelled.expectNoMessage(Duration.ofMillis(200));
  }

  @Test
  void aDenyAnnouncedByAnotherNodeClosesTheBookingsConnectionsAtOnce() {
    start(DenyCapacity.DEFAULT, true);
    TestProbe<Topic.TopicStats> stats = kit.createTestProbe();
    stats.awaitAssert(
        WAIT,
        () -> {
          cancels.tell(Topic.getTopicStats(stats.ref()));
          assertEquals(2, stats.receiveMessage(WAIT).localSubscriberCount(), "the deny list and this test listen to the channel");
          return null;
        });
    cancels.tell(Topic.publish(new Cancel("elsewhere")));
    assertEquals(new TopicRegistry.CloseBooking("elsewhere", true), registry.expectMessageClass(TopicRegistry.CloseBooking.class, WAIT));
  }

  @Test
  void aChangeHeardFromItsWriterDecidesAtOnceIsConfirmedAndAnOlderReplicaDoesNotUndoIt() {
    start(DenyCapacity.DEFAULT, true);
    TestProbe<ListChange.Confirmed> writer = kit.createTestProbe();
    // as another node does after storing a deny on a majority: this node's replica has not got it
    denyList.tell(new ListChange("remote", new BookingState(true, NOW + 100), 7, writer.ref()));
    ListChange.Confirmed confirmed = writer.expectMessageClass(ListChange.Confirmed.class, WAIT);
    assertEquals(7, confirmed.request());
    assertEquals(Cluster.get(kit.system()).selfMember().address().toString(), confirmed.node(), "the confirmation names this node");
    assertEquals(DenyList.Verdict.DENIED, check("remote"), "once confirmed, the node's verdict is the change's");
    assertEquals(List.of("remote"), list(true), "and its list's");
    assertEquals(new TopicRegistry.CloseBooking("remote", false), registry.expectMessageClass(TopicRegistry.CloseBooking.class, WAIT));

    // the replicated map of the same shard changes without the entry: the view keeps the change
    String neighbour = idsInShard(DenyCapacity.DEFAULT, DenyCapacity.DEFAULT.shardOf("remote"), 1).get(0);
    assertEquals(DenyList.Outcome.STORED, set(neighbour, false, NOW + 100));
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertEquals(DenyList.Verdict.ALLOWED, check(neighbour), "the neighbour's allow is in the view");
      assertTrue(replicated(neighbour).containsKey(neighbour), "the shard's map changed");
      return null;
    });
    assertFalse(replicated("remote").containsKey("remote"), "the replica never had the remote deny");
    assertEquals(DenyList.Verdict.DENIED, check("remote"), "an older replicated value does not undo a confirmed change");
    assertEquals(List.of("remote"), list(true));
    assertEquals(List.of(neighbour), list(false));
  }

  @Test
  void aChangeIsAnsweredStoredOnlyOnceEveryReachableMemberHasConfirmedIt() {
    start(DenyCapacity.DEFAULT, true);
    second = ActorTestKit.create("deny-list-test", config());
    DistributedData.get(second.system()); // its replicator takes part in majorities
    Cluster.get(second.system()).manager().tell(Join.create(Cluster.get(kit.system()).selfMember().address()));
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      long up = 0;
      for (Member member : Cluster.get(kit.system()).state().getMembers()) {
        up += member.status() == MemberStatus.up() ? 1 : 0;
      }
      assertEquals(2, up, "both nodes are Up");
      return null;
    });
    assertEquals(
        DenyList.Outcome.UNCONFIRMED,
        set("waits", true, NOW + 100),
        "the second node confirms changes but runs no deny list yet: stored on a majority, not confirmed");
    assertEquals(DenyList.Verdict.DENIED, check("waits"), "stored, it holds on the writing node all the same");

    DenyListStatus secondStatus = new DenyListStatus();
    second.spawn(
        create(second, DenyCapacity.DEFAULT, second.<TopicRegistry.Command>createTestProbe().ref(),
            second.spawn(Topic.create(Cancel.class, "relay-cancels")), secondStatus),
        "deny-list");
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertTrue(secondStatus.isRead(), "the second node has read the list");
      return null;
    });
    assertEquals(DenyList.Outcome.STORED, set("confirmed", true, NOW + 100));
    assertEquals(DenyList.Verdict.DENIED, secondStatus.verdict("confirmed"), "answered STORED only after the other member applied it");
  }

  @Test
  void expiredEntriesNoLongerApplyAndAreSweptFromTheReplicatedMap() {
    start(DenyCapacity.DEFAULT, true);
    assertEquals(DenyList.Outcome.STORED, set("brief", true, NOW + 10));
    assertEquals(DenyList.Outcome.STORED, set("lasting", true, NOW + 1000));
    clock.set(NOW + 10);
    assertEquals(DenyList.Verdict.ALLOWED, check("brief"), "a deny stops applying at its exp");
    assertEquals(DenyList.Verdict.DENIED, check("lasting"));
    assertEquals(List.of("lasting"), list(true));
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertFalse(replicated("brief").containsKey("brief"), "the sweep removed the expired entry from the map");
      assertEquals(1, status.entries(), "entries left");
      return null;
    });
    assertTrue(replicated("lasting").containsKey("lasting"), "the live entry stays");
  }

  @Test
  void theSweepKeepsAnEntryWrittenAgainSinceItsViewFoundItExpired() {
    // the node's view hears of changes to its replica every 3 s: the sweep (every 200 ms) acts on a view behind it
    start(DenyCapacity.DEFAULT, true, ConfigFactory.parseString("pekko.cluster.distributed-data.notify-subscribers-interval = 3s").withFallback(config()));
    replicate("again", new BookingState(true, NOW + 10)); // a deny from another node
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertEquals(DenyList.Verdict.DENIED, check("again"), "the view heard of the deny");
      return null;
    });
    clock.set(NOW + 20); // it expired
    replicate("again", new BookingState(true, NOW + 1000)); // and the booking is denied again there
    kit.createTestProbe().awaitAssert(WAIT, () -> {
      assertEquals(DenyList.Verdict.DENIED, check("again"), "denied again once the view hears of it: the sweep kept the entry");
      return null;
    });
    assertEquals(new BookingState(true, NOW + 1000), replicated("again").get("again"));
  }

  @Test
  void aMajorityReadAnsweredAfterTheReplicaTookAChangeDoesNotUndoIt() throws InterruptedException {
    // the first node: its replicator, on a dispatcher of one thread the test can hold, is the rest of the majority
    second = ActorTestKit.create("deny-list-test", TestClusterConfig.with(Map.of(
        "pekko.cluster.distributed-data.use-dispatcher", "held-replicator",
        "held-replicator.executor", "thread-pool-executor",
        "held-replicator.thread-pool-executor.fixed-pool-size", 1)));
    Cluster first = Cluster.get(second.system());
    first.manager().tell(Join.create(first.selfMember().address()));
    DistributedData.get(second.system());
    second.createTestProbe().awaitAssert(WAIT, () -> {
      assertEquals(MemberStatus.up(), first.selfMember().status(), "the first node is Up");
      return null;
    });
    start(DenyCapacity.DEFAULT, false, ConfigFactory.parseString("relay.replication-timeout = 30s").withFallback(config()));
    List<String> ids = idsInShard(DenyCapacity.DEFAULT, 0, 2); // shard 0 is read first
    // the joining node's replica holds the shard's entry before it reads: the majority's answer brings nothing new
    replicate(ids.get(0), new BookingState(false, NOW + 100));

    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    second.system().dispatchers().lookup(DispatcherSelector.fromConfig("held-replicator")).execute(() -> {
      holding.countDown();
      try {
        release.await(15, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    try {
      assertTrue(holding.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the first node's replicator is held");
      Cluster.get(kit.system()).manager().tell(Join.create(first.selfMember().address()));
      // a majority read is out once the replicator has a read aggregator (a child) waiting for the first node
      TestProbe<ActorIdentity> children = kit.createTestProbe();
      ActorSelection aggregators = Adapter.toClassic(kit.system()).actorSelection("/system/ddataReplicator/*");
      children.awaitAssert(WAIT, () -> {
        aggregators.tell(new Identify("reads"), Adapter.toClassic(children.ref()));
        assertTrue(children.expectMessageClass(ActorIdentity.class, WAIT).getActorRef().isPresent(), "a majority read is out");
        return null;
      });
      replicate(ids.get(1), new BookingState(true, NOW + 100)); // a deny reaches the replica during the read
      kit.createTestProbe().awaitAssert(WAIT, () -> {
        assertEquals(List.of(ids.get(1)), list(true), "the view heard of the deny");
        return null;
      });
    } finally {
      release.countDown();
    }
    awaitRead();
    assertEquals(DenyList.Verdict.DENIED, check(ids.get(1)), "the read, answered with the shard as it was before the deny, did not undo it");
    assertEquals(List.of(ids.get(1)), list(true));
  }

  /** Writes {@code state} straight into the booking's shard of the replica, as another node's write arrives. */
  private void replicate(String bookingId, BookingState state) {
    SelfUniqueAddress other = DistributedData.get(kit.system()).selfUniqueAddress();
    TestProbe<Replicator.UpdateResponse<LWWMap<String, BookingState>>> written = kit.createTestProbe();
    DistributedData.get(kit.system())
        .replicator()
        .tell(
            new Replicator.Update<>(
                DenyList.key(DenyCapacity.DEFAULT.shardOf(bookingId)), LWWMap.create(), Replicator.writeLocal(), written.ref(),
                map -> map.put(other, bookingId, state)));
    written.expectMessageClass(Replicator.UpdateSuccess.class, WAIT);
  }

  @Test
  void aNewBookingBeyondTheCapacityIsRefusedUntilAnEntryExpires() {
    start(new DenyCapacity(256, 5, 96), true);
    for (int i = 0; i < 4; i++) {
      assertEquals(DenyList.Outcome.STORED, set("b" + i, true, NOW + 100), "booking " + i);
    }
    assertEquals(DenyList.Outcome.STORED, set("short", true, NOW + 10));
    assertEquals(DenyList.Outcome.FULL, set("b5", true, NOW + 100), "a sixth booking");
    assertEquals(DenyList.Outcome.FULL, set("b5", false, NOW + 100), "an allow of a new booking takes a place too");
    assertEquals(DenyList.Verdict.ALLOWED, check("b5"));
    assertEquals(DenyList.Outcome.STORED, set("b0", true, NOW + 200), "a listed booking can still be changed");
    assertEquals(DenyList.Outcome.STORED, set("b1", false, NOW + 100), "and allowed");
    clock.set(NOW + 10);
    assertEquals(DenyList.Outcome.STORED, set("b5", true, NOW + 100), "an expired entry frees its place");
  }

  @Test
  void aFullShardRefusesNewBookingsEvenBelowTheTotalAndExpiredEntriesMakeRoom() {
    DenyCapacity capacity = new DenyCapacity(256, 10_000, 2);
    List<String> sameShard = idsInShard(capacity, 0, 3);
    String elsewhere = IntStream.range(0, 1000).mapToObj(i -> "other-" + i).filter(id -> capacity.shardOf(id) != 0).findFirst().orElseThrow();
    start(capacity, true);
    assertEquals(DenyList.Outcome.STORED, set(sameShard.get(0), true, NOW + 10));
    assertEquals(DenyList.Outcome.STORED, set(sameShard.get(1), true, NOW + 100));
    assertEquals(DenyList.Outcome.FULL, set(sameShard.get(2), true, NOW + 100), "a third booking in a shard of two");
    assertEquals(DenyList.Outcome.STORED, set(elsewhere, true, NOW + 100), "another shard still takes bookings");
    clock.set(NOW + 10);
    assertEquals(DenyList.Outcome.STORED, set(sameShard.get(2), true, NOW + 100), "the expired entry made room");
    assertFalse(replicated(sameShard.get(0)).containsKey(sameShard.get(0)), "and is gone from the map");
  }

  @Test
  void theReplicatedMapIsFullEvenWhenThisNodesViewLagsBehindIt() {
    DenyCapacity capacity = new DenyCapacity(256, 10_000, 2);
    List<String> sameShard = idsInShard(capacity, 7, 3);
    start(capacity, true);
    // two entries written straight into the shard's map, as another node's writes arrive
    SelfUniqueAddress other = DistributedData.get(kit.system()).selfUniqueAddress();
    for (String id : sameShard.subList(0, 2)) {
      TestProbe<Replicator.UpdateResponse<LWWMap<String, BookingState>>> written = kit.createTestProbe();
      DistributedData.get(kit.system())
          .replicator()
          .tell(
              new Replicator.Update<>(
                  DenyList.key(7), LWWMap.create(), Replicator.writeLocal(), written.ref(),
                  map -> map.put(other, id, new BookingState(true, NOW + 100))));
      written.expectMessageClass(Replicator.UpdateSuccess.class, WAIT);
    }
    assertEquals(DenyList.Outcome.FULL, set(sameShard.get(2), true, NOW + 100));
  }

  @Test
  void aBookingLivesInTheMapItsHashChooses() {
    start(DenyCapacity.DEFAULT, true);
    String id = "0f8fad5b-d9cb-469f-a165-70867728950e";
    int shard = DenyCapacity.DEFAULT.shardOf(id);
    assertEquals(DenyList.Outcome.STORED, set(id, true, NOW + 100));
    assertTrue(replicated(id).containsKey(id), "in deny-" + shard);
    int neighbour = (shard + 1) % DenyCapacity.DEFAULT.shards();
    assertFalse(get(neighbour).containsKey(id), "not in deny-" + neighbour);
  }

  @Test
  void idsSpreadEvenlyEnoughThatNoShardFillsBeforeTheList() {
    DenyCapacity capacity = DenyCapacity.DEFAULT;
    for (String kind : List.of("uuid", "sequential")) {
      int[] counts = new int[capacity.shards()];
      for (int i = 0; i < capacity.total(); i++) {
        String id =
            kind.equals("uuid")
                ? java.util.UUID.nameUUIDFromBytes(("booking " + i).getBytes(java.nio.charset.StandardCharsets.UTF_8)).toString()
                : String.format("booking-%05d", i);
        counts[capacity.shardOf(id)]++;
      }
      int fullest = IntStream.of(counts).max().orElseThrow();
      assertTrue(fullest < capacity.perShard(), kind + " ids: the fullest shard holds " + fullest + " of " + capacity.perShard());
    }
    // every node of every build must choose the same map for an id: the choice is part of the replicated format
    assertEquals(158, capacity.shardOf("booking-00042"), "booking-00042's map, as every earlier build chose it");
  }

  @Test
  void untilItHasReadTheMapsItAnswersUnreadAndStoresNothing() {
    start(DenyCapacity.DEFAULT, false);
    assertEquals(DenyList.Verdict.UNREAD, check("b1"));
    assertEquals(DenyList.Outcome.UNREAD, set("b1", true, NOW + 100));
    assertFalse(status.isRead());
    join();
    assertEquals(DenyList.Verdict.ALLOWED, check("b1"), "nothing was stored while unread");
  }

  @Test
  void theBookingIdLimitIs128BytesOfUtf8() {
    assertTrue(DenyCapacity.fits("x".repeat(128)));
    assertFalse(DenyCapacity.fits("x".repeat(129)));
    assertTrue(DenyCapacity.fits("é".repeat(64)), "64 two-byte characters");
    assertFalse(DenyCapacity.fits("é".repeat(65)), "65 two-byte characters are 130 bytes");
  }

  private static List<String> idsInShard(DenyCapacity capacity, int shard, int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; ids.size() < count; i++) {
      if (capacity.shardOf("booking-" + i) == shard) {
        ids.add("booking-" + i);
      }
    }
    return ids;
  }

  /** The entries of the map that holds {@code bookingId}, from this node's replica. */
  private Map<String, BookingState> replicated(String bookingId) {
    return get(DenyCapacity.DEFAULT.shardOf(bookingId));
  }

  private Map<String, BookingState> get(int shard) {
    TestProbe<Replicator.GetResponse<LWWMap<String, BookingState>>> reply = kit.createTestProbe();
    DistributedData.get(kit.system()).replicator().tell(new Replicator.Get<>(DenyList.key(shard), Replicator.readLocal(), reply.ref()));
    Replicator.GetResponse<LWWMap<String, BookingState>> response = reply.receiveMessage(WAIT);
    return response instanceof Replicator.GetSuccess<LWWMap<String, BookingState>> success ? success.dataValue().getEntries() : Map.of();
  }
}
