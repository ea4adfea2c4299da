package io.relay.deny;

import io.relay.RelaySettings;
import io.relay.ddata.ReplicatedMaps;
import io.relay.topic.Cancel;
import io.relay.topic.TopicRegistry;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.SelfUp;
import org.apache.pekko.cluster.typed.Subscribe;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * The replicated deny and allow list of bookings (booking id to state and expiry).
 *
 * <p>Writes go to a majority before they are acknowledged; a deny is then announced on the
 * cluster's cancel channel so every node closes the booking's connections with 4003 at once. Every
 * node also subscribes to the map and closes the connections of any newly denied booking it sees,
 * which repairs a lost announcement. Once the node is Up it reads the map from a majority and
 * reports itself loaded (part of readiness). Entries are swept after they expire.
 */
public final class DenyList extends AbstractBehavior<DenyList.Command> {

  /** Messages the deny list understands. */
  public sealed interface Command {}

  /** Denies (or, with {@code denied = false}, allows) a booking until {@code expiresAt}. */
  public record Set(String bookingId, boolean denied, long expiresAt, ActorRef<Boolean> replyTo)
      implements Command {}

  /** Lists the booking ids currently denied (or allowed). */
  public record ListBookings(boolean denied, ActorRef<List<String>> replyTo) implements Command {}

  /** Answers whether a booking is currently denied. */
  public record Check(String bookingId, ActorRef<Boolean> replyTo) implements Command {}

  private record SetResponse(
      Replicator.UpdateResponse<LWWMap<String, BookingState>> response, Set request)
      implements Command {}

  private record Changed(Replicator.SubscribeResponse<LWWMap<String, BookingState>> response)
      implements Command {}

  private record Ignored(Object response) implements Command {}

  private enum Sweep implements Command {
    INSTANCE
  }

  private enum Load implements Command {
    INSTANCE
  }

  private record Loaded(Replicator.GetResponse<LWWMap<String, BookingState>> response) implements Command {}

  private static final Key<LWWMap<String, BookingState>> KEY = LWWMapKey.create("bookings");

  private final ReplicatorMessageAdapter<Command, LWWMap<String, BookingState>> replicator;
  private final SelfUniqueAddress self;
  private final RelaySettings settings;
  private final ActorRef<TopicRegistry.Command> registry;
  private final ActorRef<Topic.Command<Cancel>> cancels;
  private final LongSupplier clockSeconds;
  private final Runnable onLoaded;
  private final TimerScheduler<Command> timers;
  private boolean loaded;
  private Map<String, BookingState> bookings = new HashMap<>();

  /**
   * @param cancels the cluster's cancel channel
   * @param onLoaded run once, when the replicated list has been read from a majority
   */
  public static Behavior<Command> create(
      RelaySettings settings,
      ActorRef<TopicRegistry.Command> registry,
      ActorRef<Topic.Command<Cancel>> cancels,
      LongSupplier clockSeconds,
      Runnable onLoaded) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Sweep.INSTANCE, settings.denySweepInterval());
                  Cluster.get(context.getSystem())
                      .subscriptions()
                      .tell(Subscribe.create(context.messageAdapter(SelfUp.class, up -> Load.INSTANCE), SelfUp.class));
                  return DistributedData.withReplicatorMessageAdapter(
                      (ReplicatorMessageAdapter<Command, LWWMap<String, BookingState>> adapter) ->
                          new DenyList(context, timers, adapter, settings, registry, cancels, clockSeconds, onLoaded));
                }));
  }

  private DenyList(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      ReplicatorMessageAdapter<Command, LWWMap<String, BookingState>> replicator,
      RelaySettings settings,
      ActorRef<TopicRegistry.Command> registry,
      ActorRef<Topic.Command<Cancel>> cancels,
      LongSupplier clockSeconds,
      Runnable onLoaded) {
    super(context);
    this.timers = timers;
    this.replicator = replicator;
    this.settings = settings;
    this.registry = registry;
    this.cancels = cancels;
    this.clockSeconds = clockSeconds;
    this.onLoaded = onLoaded;
    this.self = DistributedData.get(context.getSystem()).selfUniqueAddress();
    replicator.subscribe(KEY, Changed::new);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Set.class, this::onSet)
        .onMessage(SetResponse.class, this::onSetResponse)
        .onMessage(ListBookings.class, this::onList)
        .onMessage(Check.class, this::onCheck)
        .onMessage(Changed.class, this::onChanged)
        .onMessage(Sweep.class, this::onSweep)
        .onMessage(Load.class, this::onLoad)
        .onMessage(Loaded.class, this::onLoadedResponse)
        .onMessage(Ignored.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onSet(Set set) {
    BookingState state = new BookingState(set.denied(), set.expiresAt());
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                KEY,
                LWWMap.create(),
                new Replicator.WriteMajority(settings.replicationTimeout()),
                replyTo,
                map -> map.put(self, set.bookingId(), state)),
        response -> new SetResponse(response, set));
    return this;
  }

  private Behavior<Command> onSetResponse(SetResponse response) {
    Set set = response.request();
    boolean stored = response.response() instanceof Replicator.UpdateSuccess;
    if (stored) {
      apply(withEntry(set.bookingId(), new BookingState(set.denied(), set.expiresAt())));
      if (set.denied()) {
        cancels.tell(Topic.publish(new Cancel(set.bookingId())));
      }
    }
    set.replyTo().tell(stored);
    return this;
  }

  private Behavior<Command> onLoad(Load load) {
    if (!loaded) {
      replicator.askGet(
          replyTo -> new Replicator.Get<>(KEY, new Replicator.ReadMajority(settings.replicationTimeout()), replyTo),
          Loaded::new);
    }
    return this;
  }

  private Behavior<Command> onLoadedResponse(Loaded response) {
    if (response.response() instanceof Replicator.GetSuccess<LWWMap<String, BookingState>> success) {
      apply(new HashMap<>(success.dataValue().getEntries()));
    } else if (!(response.response() instanceof Replicator.NotFound)) {
      timers.startSingleTimer(Load.INSTANCE, settings.replicationTimeout());
      return this;
    }
    if (!loaded) {
      loaded = true;
      onLoaded.run();
    }
    return this;
  }

  private Map<String, BookingState> withEntry(String bookingId, BookingState state) {
    Map<String, BookingState> next = new HashMap<>(bookings);
    next.put(bookingId, state);
    return next;
  }

  private Behavior<Command> onChanged(Changed changed) {
    if (changed.response() instanceof Replicator.Changed<LWWMap<String, BookingState>> c) {
      apply(new HashMap<>(c.get(KEY).getEntries()));
    }
    return this;
  }

  /** Replaces the local view and closes the connections of every newly denied booking. */
  private void apply(Map<String, BookingState> next) {
    for (Map.Entry<String, BookingState> entry : next.entrySet()) {
      if (isDenied(entry.getValue()) && !isDenied(bookings.get(entry.getKey()))) {
        registry.tell(new TopicRegistry.CloseBooking(entry.getKey()));
      }
    }
    bookings = next;
  }

  private boolean isDenied(BookingState state) {
    return state != null && state.denied() && state.expiresAt() > clockSeconds.getAsLong();
  }

  private Behavior<Command> onList(ListBookings list) {
    long now = clockSeconds.getAsLong();
    list.replyTo()
        .tell(
            bookings.entrySet().stream()
                .filter(e -> e.getValue().denied() == list.denied())
                .filter(e -> e.getValue().expiresAt() > now)
                .map(Map.Entry::getKey)
                .sorted()
                .toList());
    return this;
  }

  private Behavior<Command> onCheck(Check check) {
    check.replyTo().tell(isDenied(bookings.get(check.bookingId())));
    return this;
  }

  private Behavior<Command> onSweep(Sweep sweep) {
    long now = clockSeconds.getAsLong();
    List<String> expired =
        bookings.entrySet().stream()
            .filter(e -> e.getValue().expiresAt() <= now)
            .map(Map.Entry::getKey)
            .toList();
    if (!expired.isEmpty()) {
      replicator.askUpdate(replyTo -> ReplicatedMaps.removeLocally(KEY, expired, self, replyTo), Ignored::new);
    }
    return this;
  }
}
