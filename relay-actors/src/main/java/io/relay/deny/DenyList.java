package io.relay.deny;

import io.relay.RelaySettings;
import io.relay.ddata.ReplicatedMaps;
import io.relay.topic.TopicRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Subscribe;

/**
 * The replicated deny and allow list of bookings (booking id to state and expiry), spread over
 * {@link DenyCapacity#shards()} LWWMaps by hash of the booking id, each kept well under Artery's
 * maximum frame size by the list's capacity.
 *
 * <p>A write goes to a majority, and is then sent ({@link ListChange}) straight to the list of
 * every member that confirms changes (at this list's own path on that node), which applies it at
 * once and confirms; the write is answered {@link Outcome#STORED} once every member
 * that is Up or leaving and reachable from this node has confirmed ({@link Membership#confirmers}), and {@link
 * Outcome#UNCONFIRMED} if one has not within the replication timeout. So once a deny is answered,
 * no reachable member issues a code for the booking or admits one of its connections, and each has
 * its connections closing with 4003. A deny is also announced on the cluster's cancel channel
 * (which nodes of earlier builds listen to). Every node subscribes to the maps too and closes the
 * connections of any newly denied booking it sees, which repairs a lost message. A new booking beyond the capacity is refused ({@link
 * Outcome#FULL}). Once the node is Up it reads every map from a majority, and only then reports the
 * list read ({@link DenyListStatus}); a node that loses sight of a majority of nodes reports it
 * unread until it has read it again. While unread, verdicts are {@link Verdict#UNREAD} and writes
 * are refused. Verdicts are read from the node's replica without a message to this actor ({@link
 * DenyListStatus#verdict}): a code request and an admission each check one. Expired entries are
 * swept.
 *
 * <p>The writes, the replicated maps' changes, the sweep and the majority reads that make the list
 * read all change the same view and the same readiness, so they are this actor's handlers; the
 * state they keep is in classes of its own ({@link DenyView}, {@link Places}, {@link ShardReads},
 * {@link Membership}, {@link Confirmations}, {@link DenyCapacity}).
 */
public final class DenyList extends AbstractBehavior<DenyList.Command> {

  /**
   * The cluster role of a node that confirms changes of the list ({@link ListChange}); every node
   * of this build has it. A member without it (a build from before confirmations) is not waited
   * for: it learns a change from the replicated list alone.
   */
  public static final String CONFIRMS_CHANGES = "deny-confirms";

  /** Messages the deny list understands. */
  public sealed interface Command {}

  /** What the lists of other nodes send this one ({@link ListChange}). */
  public non-sealed interface FromOtherNodes extends Command {}

  /** Denies (or, with {@code denied = false}, allows) a booking until {@code expiresAt}. */
  public record Set(String bookingId, boolean denied, long expiresAt, ActorRef<Outcome> replyTo)
      implements Command {}

  /** What became of a {@link Set}. */
  public enum Outcome {
    /** Stored on a majority of nodes, and applied by every reachable member. */
    STORED,
    /** Stored on a majority, but a reachable member did not confirm applying it in time. */
    UNCONFIRMED,
    /** Not confirmed by a majority in time; it may still spread. */
    UNAVAILABLE,
    /** A new booking, and the list (or the booking's shard) is at capacity. */
    FULL,
    /** This node has not read the list from a majority. */
    UNREAD
  }

  /** Lists the booking ids currently denied (or allowed). */
  public record ListBookings(boolean denied, ActorRef<List<String>> replyTo) implements Command {}

  /** A booking's standing as this node knows it. */
  public enum Verdict {
    ALLOWED,
    DENIED,
    /** This node has not read the list from a majority: it cannot tell. */
    UNREAD
  }

  private record SetResponse(
      Replicator.UpdateResponse<LWWMap<String, BookingState>> response, Set request, int shard, boolean grows)
      implements Command {}

  private record Changed(Replicator.SubscribeResponse<LWWMap<String, BookingState>> response) implements Command {}

  private record Ignored(Object response) implements Command {}

  private record CancelHeard(Cancel cancel) implements Command {}

  private record ChangeConfirmed(ListChange.Confirmed confirmed) implements Command {}

  private record ConfirmDeadline(long request) implements Command {}

  private enum Settle implements Command {
    INSTANCE
  }

  private enum Sweep implements Command {
    INSTANCE
  }

  private record MembershipChanged(ClusterEvent.MemberEvent event) implements Command {}

  private record ReachabilityChanged(ClusterEvent.ReachabilityEvent event) implements Command {}

  private record Replicas(int count, StartLoad start) implements Command {}

  private record Loaded(Replicator.GetResponse<LWWMap<String, BookingState>> response, int shard, int round)
      implements Command {}

  private record LoadAgain(int shard, int round) implements Command {}

  private record StartLoad(int round, int attempt) implements Command {}

  /** Shards read from a majority at once while loading. */
  private static final int LOAD_WINDOW = 16;
  /** How soon a load starts again when the replicator does not know every Up member yet. */
  private static final Duration REPLICAS_RETRY = Duration.ofMillis(200);
  /** After this many retries the load starts with the replicas the replicator knows. */
  private static final int REPLICAS_ATTEMPTS = 25;
  /** At most one capacity warning in this long. */
  private static final Duration FULL_WARNING_EVERY = Duration.ofMinutes(1);

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, BookingState>> replicator;
  private final SelfUniqueAddress self;
  private final RelaySettings settings;
  private final DenyCapacity capacity;
  private final ActorRef<TopicRegistry.Command> registry;
  private final ActorRef<Topic.Command<Cancel>> cancels;
  private final ActorRef<ListChange.Confirmed> confirmations;
  /** This list's path on its node, where every node's list lives. */
  private final String path;
  private final String selfAddress;
  private final Confirmations pending = new Confirmations();
  private final LongSupplier clockSeconds;
  private final DenyListStatus status;
  private final List<Key<LWWMap<String, BookingState>>> keys;
  private final Map<String, Integer> shardOfKey = new HashMap<>();
  private final DenyView view;
  private final Membership membership;
  private final Places places;
  private long lastFullWarning = Long.MIN_VALUE;
  private final ShardReads reads;
  /** Each shard's map as this node last heard it, from a change notification or a majority read. */
  private final List<LWWMap<String, BookingState>> heard;

  /**
   * @param cancels the cluster's cancel channel
   * @param status where the list reports whether it is read, for readiness and the servers
   */
  public static Behavior<Command> create(
      RelaySettings settings,
      ActorRef<TopicRegistry.Command> registry,
      ActorRef<Topic.Command<Cancel>> cancels,
      LongSupplier clockSeconds,
      DenyListStatus status) {
    return create(settings, DenyCapacity.DEFAULT, registry, cancels, clockSeconds, status);
  }

  /** As {@link #create(RelaySettings, ActorRef, ActorRef, LongSupplier, DenyListStatus)}, with another capacity (tests). */
  static Behavior<Command> create(
      RelaySettings settings, DenyCapacity capacity, ActorRef<TopicRegistry.Command> registry,
      ActorRef<Topic.Command<Cancel>> cancels, LongSupplier clockSeconds, DenyListStatus status) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers ->
                    DistributedData.withReplicatorMessageAdapter(
                        (ReplicatorMessageAdapter<Command, LWWMap<String, BookingState>> adapter) ->
                            new DenyList(
                                context, timers, adapter, settings, capacity, registry, cancels, clockSeconds, status))));
  }

  private DenyList(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, LWWMap<String, BookingState>> replicator,
      RelaySettings settings,
      DenyCapacity capacity,
      ActorRef<TopicRegistry.Command> registry,
      ActorRef<Topic.Command<Cancel>> cancels,
      LongSupplier clockSeconds,
      DenyListStatus status) {
    super(context);
    this.context = context;
    this.timers = timers;
    this.replicator = replicator;
    this.settings = settings;
    this.capacity = capacity;
    this.registry = registry;
    this.cancels = cancels;
    this.path = context.getSelf().path().toStringWithoutAddress();
    this.confirmations = context.messageAdapter(ListChange.Confirmed.class, ChangeConfirmed::new);
    this.clockSeconds = clockSeconds;
    this.status = status;
    this.self = DistributedData.get(context.getSystem()).selfUniqueAddress();
    this.keys = IntStream.range(0, capacity.shards()).mapToObj(DenyList::key).toList();
    this.view = new DenyView(capacity.shards());
    this.places = new Places(capacity, view, self);
    this.reads = new ShardReads(capacity.shards(), LOAD_WINDOW);
    this.heard = new ArrayList<>(Collections.nCopies(capacity.shards(), LWWMap.create()));
    Cluster cluster = Cluster.get(context.getSystem());
    this.membership = new Membership(cluster.selfMember().uniqueAddress());
    this.selfAddress = cluster.selfMember().address().toString();
    status.read(false);
    status.entries(0);
    status.denied(bookingId -> view.isDenied(capacity.shardOf(bookingId), bookingId, clockSeconds.getAsLong()));
    for (int shard = 0; shard < keys.size(); shard++) {
      shardOfKey.put(keys.get(shard).id(), shard);
      replicator.subscribe(keys.get(shard), Changed::new);
    }
    cluster
        .subscriptions()
        .tell(Subscribe.create(context.messageAdapter(ClusterEvent.MemberEvent.class, MembershipChanged::new), ClusterEvent.MemberEvent.class));
    cluster
        .subscriptions()
        .tell(
            Subscribe.create(
                context.messageAdapter(ClusterEvent.ReachabilityEvent.class, ReachabilityChanged::new),
                ClusterEvent.ReachabilityEvent.class));
    cancels.tell(Topic.subscribe(context.messageAdapter(Cancel.class, CancelHeard::new)));
    timers.startTimerWithFixedDelay(Sweep.INSTANCE, settings.denySweepInterval());
    timers.startTimerWithFixedDelay(Settle.INSTANCE, DenyView.SETTLE);
  }

  /**
   * How long a {@link Set} takes at most to be answered: its majority write, then the members'
   * confirmations, each within the replication timeout.
   */
  public static Duration answeredWithin(RelaySettings settings) {
    return settings.replicationTimeout().multipliedBy(2);
  }

  /** The replicated map of one shard. */
  static Key<LWWMap<String, BookingState>> key(int shard) {
    return LWWMapKey.create("deny-" + shard);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Set.class, this::onSet)
        .onMessage(SetResponse.class, this::onSetResponse)
        .onMessage(ListBookings.class, this::onList)
        .onMessage(Changed.class, this::onChanged)
        .onMessage(CancelHeard.class, heard -> onCancelHeard(heard.cancel()))
        .onMessage(ListChange.class, this::onChangeHeard)
        .onMessage(ChangeConfirmed.class, confirmed -> onConfirmed(confirmed.confirmed()))
        .onMessage(ConfirmDeadline.class, this::onConfirmDeadline)
        .onMessage(Settle.class, this::onSettle)
        .onMessage(Sweep.class, this::onSweep)
        .onMessage(MembershipChanged.class, changed -> onMembership(membership.apply(changed.event())))
        .onMessage(ReachabilityChanged.class, changed -> onMembership(membership.apply(changed.event())))
        .onMessage(StartLoad.class, this::onStartLoad)
        .onMessage(Replicas.class, this::onReplicas)
        .onMessage(Loaded.class, this::onLoaded)
        .onMessage(LoadAgain.class, this::onLoadAgain)
        .onMessage(Ignored.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onSet(Set set) {
    if (!status.isRead()) {
      set.replyTo().tell(Outcome.UNREAD);
      return this;
    }
    long now = clockSeconds.getAsLong();
    int shard = capacity.shardOf(set.bookingId());
    boolean grows = !view.contains(shard, set.bookingId());
    if (grows && places.full(shard, now)) {
      refuseFull(set);
      return this;
    }
    if (grows) {
      places.writing(set.bookingId());
    }
    UnaryOperator<LWWMap<String, BookingState>> put = places.put(set.bookingId(), new BookingState(set.denied(), set.expiresAt()), now);
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                keys.get(shard), LWWMap.create(), new Replicator.WriteMajority(settings.replicationTimeout()), replyTo, put),
        response -> new SetResponse(response, set, shard, grows));
    return this;
  }

  private void refuseFull(Set set) {
    long now = System.nanoTime();
    if (lastFullWarning == Long.MIN_VALUE || now - lastFullWarning > FULL_WARNING_EVERY.toNanos()) {
      lastFullWarning = now;
      context.getLog().warn(
          "deny list at capacity ({} entries, {} per shard): refusing new bookings until entries expire",
          capacity.total(),
          capacity.perShard());
    }
    set.replyTo().tell(Outcome.FULL);
  }

  private Behavior<Command> onSetResponse(SetResponse response) {
    Set set = response.request();
    if (response.grows()) {
      places.written(set.bookingId());
    }
    if (response.response() instanceof Replicator.UpdateSuccess) {
      long now = clockSeconds.getAsLong();
      if (view.put(response.shard(), set.bookingId(), new BookingState(set.denied(), set.expiresAt()), now)) {
        registry.tell(new TopicRegistry.CloseBooking(set.bookingId(), false));
      }
      status.entries(view.entries());
      if (set.denied()) {
        cancels.tell(Topic.publish(new Cancel(set.bookingId())));
      }
      spread(set);
    } else if (response.response() instanceof Replicator.ModifyFailure<?> failure && failure.cause() instanceof Places.ShardFull) {
      refuseFull(set);
    } else {
      set.replyTo().tell(Outcome.UNAVAILABLE);
    }
    return this;
  }

  /**
   * Sends a stored change to the list of every member that confirms changes, this node's
   * included; it is answered when the reachable ones have confirmed.
   */
  private void spread(Set set) {
    long request = pending.open(set);
    ListChange change = new ListChange(set.bookingId(), new BookingState(set.denied(), set.expiresAt()), request, confirmations);
    ActorRefResolver resolver = ActorRefResolver.get(context.getSystem());
    for (String node : membership.confirmers()) {
      resolver.<Command>resolveActorRef(node + path).tell(change);
    }
    timers.startSingleTimer(new ConfirmDeadline(request), settings.replicationTimeout());
    answerConfirmed();
  }

  private Behavior<Command> onSettle(Settle settle) {
    view.settle(System.nanoTime());
    return this;
  }

  /**
   * A node stored a change: it decides this node's verdicts from now on, ahead of the replicated
   * list, and the booking's connections close at once if it denies.
   */
  private Behavior<Command> onChangeHeard(ListChange change) {
    if (view.confirm(capacity.shardOf(change.bookingId()), change.bookingId(), change.state(), clockSeconds.getAsLong(), System.nanoTime())) {
      registry.tell(new TopicRegistry.CloseBooking(change.bookingId(), false));
    }
    change.replyTo().tell(new ListChange.Confirmed(change.request(), selfAddress));
    return this;
  }

  private Behavior<Command> onConfirmed(ListChange.Confirmed confirmed) {
    pending.confirmed(confirmed.request(), confirmed.node());
    answerConfirmed();
    return this;
  }

  /** Answers the changes every member that confirms, Up or leaving and reachable now, has confirmed. */
  private void answerConfirmed() {
    pending.answerable(membership.confirmers()).forEach(
        (request, set) -> {
          timers.cancel(new ConfirmDeadline(request));
          set.replyTo().tell(Outcome.STORED);
        });
  }

  private Behavior<Command> onConfirmDeadline(ConfirmDeadline deadline) {
    Confirmations.Overdue overdue = pending.overdue(deadline.request(), membership.confirmers());
    if (overdue != null) {
      context.getLog().warn(
          "a change of the deny list is stored on a majority, but {} did not confirm applying it within {} ms; answering 503",
          overdue.missing(),
          settings.replicationTimeout().toMillis());
      overdue.set().replyTo().tell(Outcome.UNCONFIRMED);
    }
    return this;
  }

  private Behavior<Command> onChanged(Changed changed) {
    if (changed.response() instanceof Replicator.Changed<LWWMap<String, BookingState>> c) {
      apply(shardOfKey.get(c.key().id()), c.dataValue());
    }
    return this;
  }

  /**
   * Replaces a shard's view and closes the connections of its newly denied bookings. A change
   * notification brings the replica's latest map and replaces the one last heard (merging every
   * notification instead would, once the replicator has pruned a removed node's data, bring back
   * entries removed since).
   */
  private void apply(int shard, LWWMap<String, BookingState> map) {
    heard.set(shard, map);
    for (String denied : view.replace(shard, map.getEntries(), clockSeconds.getAsLong())) {
      registry.tell(new TopicRegistry.CloseBooking(denied, false));
    }
    view.settle(System.nanoTime());
    status.entries(view.entries());
  }

  private Behavior<Command> onList(ListBookings list) {
    list.replyTo().tell(view.bookings(list.denied(), clockSeconds.getAsLong()));
    return this;
  }

  /**
   * A node announced a deny: its connections close at once, before the replicated list brings the
   * entry (which closes them too, should the announcement be lost).
   */
  private Behavior<Command> onCancelHeard(Cancel cancel) {
    registry.tell(new TopicRegistry.CloseBooking(cancel.bookingId(), true));
    return this;
  }

  private Behavior<Command> onSweep(Sweep sweep) {
    long now = clockSeconds.getAsLong();
    for (int shard = 0; shard < keys.size(); shard++) {
      List<String> expired = view.expired(shard, now);
      if (!expired.isEmpty()) {
        Key<LWWMap<String, BookingState>> key = keys.get(shard);
        replicator.askUpdate(
            replyTo -> ReplicatedMaps.removeLocally(key, expired, state -> state.expiredAt(now), self, replyTo), Ignored::new);
      }
    }
    return this;
  }

  // Reading the list from a majority: when this node is Up, and again after it lost sight of a
  // majority of nodes (its replica may have missed writes in the meantime).

  private Behavior<Command> onMembership(Membership.Change change) {
    answerConfirmed(); // a member that was removed or downed, or became unreachable, is no longer waited for
    if (change == Membership.Change.MAJORITY_LOST) {
      reads.abandon();
      if (status.isRead()) {
        status.read(false);
        context.getLog().warn(
            "lost sight of a majority of nodes ({}): issuing no codes and admitting no connections until the deny list is read again",
            membership);
      }
    } else if (change == Membership.Change.MAJORITY_REACHABLE && !status.isRead() && !reads.isActive()) {
      context.getSelf().tell(new StartLoad(reads.begin(), 1));
    }
    return this;
  }

  /** Reads start once the replicator knows every Up member, so that a majority means a majority. */
  private Behavior<Command> onStartLoad(StartLoad start) {
    if (reads.isCurrent(start.round())) {
      replicator.askReplicaCount(Replicator.GetReplicaCount::new, count -> new Replicas(count.n(), start));
    }
    return this;
  }

  private Behavior<Command> onReplicas(Replicas replicas) {
    StartLoad start = replicas.start();
    if (!reads.isCurrent(start.round())) {
      return this;
    }
    if (replicas.count() < membership.upCount() && start.attempt() < REPLICAS_ATTEMPTS) {
      timers.startSingleTimer(new StartLoad(start.round(), start.attempt() + 1), REPLICAS_RETRY);
      return this;
    }
    reads.queueAll();
    readNext();
    return this;
  }

  private void readNext() {
    int round = reads.round();
    for (int shard : reads.next()) {
      replicator.askGet(
          replyTo -> new Replicator.Get<>(keys.get(shard), new Replicator.ReadMajority(settings.replicationTimeout()), replyTo),
          response -> new Loaded(response, shard, round));
    }
  }

  private Behavior<Command> onLoaded(Loaded loaded) {
    if (loaded.response() instanceof Replicator.GetSuccess<LWWMap<String, BookingState>> success) {
      // The answer is the replica as it was when the read began, merged with the replies: a change
      // the replica took meanwhile, which a notification may have brought already, is not in it.
      // Merged into the map last heard, it loses nothing.
      apply(loaded.shard(), heard.get(loaded.shard()).merge(success.dataValue()));
    }
    if (!reads.isCurrent(loaded.round())) {
      return this;
    }
    if (!(loaded.response() instanceof Replicator.GetSuccess || loaded.response() instanceof Replicator.NotFound)) {
      reads.failed();
      timers.startSingleTimer(new LoadAgain(loaded.shard(), loaded.round()), settings.replicationTimeout());
      return this;
    }
    if (reads.succeeded()) {
      status.read(true);
      context.getLog().info(
          "deny list read from a majority: {} entries in {} shards, in {} ms",
          view.entries(),
          keys.size(),
          reads.elapsedMillis());
    } else {
      readNext();
    }
    return this;
  }

  private Behavior<Command> onLoadAgain(LoadAgain again) {
    if (reads.isCurrent(again.round())) {
      reads.again(again.shard());
      readNext();
    }
    return this;
  }
}
