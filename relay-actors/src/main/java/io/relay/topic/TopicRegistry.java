package io.relay.topic;

import io.relay.CborSerializable;
import io.relay.RelaySettings;
import io.relay.ws.CloseCodes;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.ChildFailed;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;

/**
 * This node's hosted topics: creates a topic actor on a topic's first connection and claims the
 * topic cluster-wide, gives a topic up (4001) when a newer claim arrives, holds an evicted topic
 * down for a while, stops idle topic actors, and fans node-wide commands (deny, drain, reports)
 * out to its topics.
 */
public final class TopicRegistry extends AbstractBehavior<TopicRegistry.Command> {

  /** Relay nodes register their registry under this key to answer cluster-wide status. */
  public static final ServiceKey<Command> STATUS_KEY = ServiceKey.create(Command.class, "relay-status");

  /** Messages the registry understands. */
  public sealed interface Command {}

  /** Adds an accepted connection to its topic, creating and claiming the topic if needed. */
  public record Join(Connection connection, ActorRef<TopicActor.JoinResult> replyTo) implements Command {}

  /**
   * Closes the connections of a denied booking with 4003.
   *
   * @param announced whether the deny was heard on the cluster's cancel channel (recorded among
   *     the node's recent events) rather than found in the replicated list
   */
  public record CloseBooking(String bookingId, boolean announced) implements Command {}

  /** Drains: closes every connection with 1001, spread over the drain spread; answers when done. */
  public record Drain(ActorRef<Done> replyTo) implements Command {}

  /** Asks for this node's connection reports (sent from any node). */
  public record Report(ActorRef<NodeReport> replyTo) implements Command, CborSerializable {
    /** Another node's request without where to answer is refused as it is read. */
    public Report {
      Objects.requireNonNull(replyTo, "replyTo");
    }
  }

  /**
   * One part of a node's connection reports (its recent events, oldest first, come with part 0):
   * a node answers {@link Report} with {@code parts} of these, each well under Artery's maximum
   * frame size whatever the number of connections.
   */
  public record NodeReport(String node, List<ConnectionReport> connections, List<ClusterEvent> events, int part, int parts)
      implements CborSerializable {
    /** Another node's report without its node, its reports or its events, or with a null among them, is refused as it is read. */
    public NodeReport {
      Objects.requireNonNull(node, "node");
      connections = List.copyOf(connections);
      events = List.copyOf(events);
    }
  }

  /** How many recent events a node keeps for the cluster page. */
  static final int RECENT_EVENTS = 50;

  /** From a topic actor whose last connection left, having seen {@code joins} joins. */
  record TopicIdle(String topic, ActorRef<TopicActor.Command> actor, long joins) implements Command {}

  private record ClaimsHeard(ClaimAnnouncement announcement) implements Command {}

  private enum PublishDigest implements Command {
    INSTANCE
  }

  /** A drain under way: {@code topics} from {@code closed} on are still to close; it began at {@code startNanos}. */
  private record DrainStep(List<ActorRef<TopicActor.Command>> topics, int closed, long startNanos, ActorRef<Done> replyTo)
      implements Command {}

  private record Hosted(ActorRef<TopicActor.Command> actor, long joinsSent) {}

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final TopicActor.Context shared;
  private final ActorRef<Topic.Command<ClaimAnnouncement>> claims;
  private final LongSupplier clock;
  private final ClaimBook book;
  private final Map<String, Hosted> topics = new HashMap<>();
  /** The topic of each living topic actor: one that fails is known by its reference only. */
  private final Map<ActorRef<TopicActor.Command>, String> topicOf = new HashMap<>();
  private final ArrayDeque<ClusterEvent> events = new ArrayDeque<>();
  private long incarnations;
  /** Set by a drain, which ends with the node: every join after it is refused. */
  private boolean draining;

  /** @param claims the cluster's channel of topic claims */
  public static Behavior<Command> create(
      TopicActor.Context shared, ActorRef<Topic.Command<ClaimAnnouncement>> claims, LongSupplier clockMillis) {
    return Behaviors.setup(
        context -> Behaviors.withTimers(timers -> new TopicRegistry(context, timers, shared, claims, clockMillis)));
  }

  private TopicRegistry(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      TopicActor.Context shared,
      ActorRef<Topic.Command<ClaimAnnouncement>> claims,
      LongSupplier clock) {
    super(context);
    this.context = context;
    this.timers = timers;
    this.shared = shared;
    this.claims = claims;
    this.clock = clock;
    RelaySettings.Claims settings = shared.settings().claims();
    this.book = new ClaimBook(shared.node(), settings.holdDown(), settings.maxHoldDown(), settings.flapWindow());
    claims.tell(Topic.subscribe(context.messageAdapter(ClaimAnnouncement.class, ClaimsHeard::new)));
    context.getSystem().receptionist().tell(Receptionist.register(STATUS_KEY, context.getSelf()));
    timers.startTimerWithFixedDelay(PublishDigest.INSTANCE, settings.digestInterval());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Join.class, this::onJoin)
        .onMessage(CloseBooking.class, this::onCloseBooking)
        .onMessage(Drain.class, this::onDrain)
        .onMessage(DrainStep.class, this::onDrainStep)
        .onMessage(Report.class, this::onReport)
        .onMessage(TopicIdle.class, this::onTopicIdle)
        .onMessage(ClaimsHeard.class, this::onClaimsHeard)
        .onMessage(PublishDigest.class, this::onPublishDigest)
        .onSignal(ChildFailed.class, this::onTopicFailed)
        .onSignal(Terminated.class, this::onTopicStopped)
        .build();
  }

  private Behavior<Command> onJoin(Join join) {
    if (draining) { // an admission that passed its check before the drain: the drain has closed, or is closing, every topic here
      join.replyTo().tell(new TopicActor.Refused(503, "node is draining; reconnect with a new code", Duration.ofSeconds(1)));
      return this;
    }
    String topic = join.connection().grant().topic();
    Hosted hosted = topics.get(topic);
    if (hosted == null) {
      Optional<ClaimBook.HoldDown> held = book.holdDown(topic, clock.getAsLong());
      if (held.isPresent()) {
        shared.metrics().holdDownRefusals.inc();
        join.replyTo()
            .tell(new TopicActor.Refused(503, "topic moved to another node; retry", Duration.ofSeconds(1)));
        return this;
      }
      hosted = new Hosted(spawnTopic(topic), 0);
      Claim claim = book.claim(topic, clock.getAsLong());
      shared.metrics().claims.inc();
      record("claim", topic, "first connection here; claimed with stamp " + claim.stamp());
      if (shared.settings().claims().announce()) {
        publish(List.of(claim));
      }
    }
    topics.put(topic, new Hosted(hosted.actor(), hosted.joinsSent() + 1));
    hosted.actor().tell(new TopicActor.Join(join.connection(), join.replyTo()));
    return this;
  }

  private ActorRef<TopicActor.Command> spawnTopic(String topic) {
    String name = "topic-" + URLEncoder.encode(topic, StandardCharsets.UTF_8) + "-" + (++incarnations);
    ActorRef<TopicActor.Command> actor = context.spawn(TopicActor.create(topic, context.getSelf(), shared), name);
    context.watch(actor);
    topicOf.put(actor, topic);
    return actor;
  }

  private void publish(List<Claim> announced) {
    for (ClaimAnnouncement part : ClaimAnnouncement.inParts(shared.node(), announced)) {
      claims.tell(Topic.publish(part));
    }
  }

  private Behavior<Command> onClaimsHeard(ClaimsHeard heard) {
    long now = clock.getAsLong();
    List<Claim> reassert = new ArrayList<>();
    for (Claim theirs : heard.announcement().claims()) {
      switch (book.judge(theirs, now)) {
        case EVICT -> evict(theirs, now);
        case REASSERT -> book.hosted(theirs.topic()).ifPresent(reassert::add);
        case IGNORE -> { }
      }
    }
    if (!reassert.isEmpty()) {
      publish(reassert);
    }
    return this;
  }

  private void evict(Claim winner, long now) {
    Hosted hosted = topics.remove(winner.topic());
    if (hosted != null) {
      hosted.actor().tell(new TopicActor.CloseAll(CloseCodes.TOPIC_MOVED, "topic moved to another node"));
    }
    shared.metrics().evictions.inc();
    ClaimBook.HoldDown held = book.holdDown(winner.topic(), now).orElseThrow();
    record(
        held.flapping() ? "flapping" : "eviction",
        winner.topic(),
        "moved to " + winner.node() + "; held down for " + held.period().toSeconds() + " s");
    if (held.flapping()) {
      shared.metrics().flapping.inc();
      context
          .getLog()
          .warn(
              "topic {} is flapping between {} and {}: evicted again within the flap window, held down for {}s; "
                  + "check that every ingress uses the same upstream list",
              winner.topic(),
              shared.node(),
              winner.node(),
              held.period().toSeconds());
    } else {
      context.getLog().info("topic {} moved to {}; closing its connections here with 4001", winner.topic(), winner.node());
    }
  }

  private Behavior<Command> onPublishDigest(PublishDigest tick) {
    book.sweep(clock.getAsLong());
    List<Claim> digest = book.digest();
    if (!digest.isEmpty()) {
      publish(digest);
    }
    return this;
  }

  private Behavior<Command> onCloseBooking(CloseBooking close) {
    if (close.announced()) {
      record("deny", close.bookingId(), "booking denied: its connections close with 4003");
    }
    // every topic actor here, one evicted and still closing its connections with 4001 included
    topicOf.keySet().forEach(actor -> actor.tell(new TopicActor.CloseBooking(close.bookingId())));
    return this;
  }

  private void record(String kind, String subject, String detail) {
    if (events.size() == RECENT_EVENTS) {
      events.removeFirst();
    }
    events.addLast(new ClusterEvent(Instant.ofEpochMilli(clock.getAsLong()).toString(), shared.node(), kind, subject, detail));
  }

  private Behavior<Command> onDrain(Drain drain) {
    draining = true;
    List<ActorRef<TopicActor.Command>> actors = topics.values().stream().map(Hosted::actor).toList();
    return onDrainStep(new DrainStep(actors, 0, System.nanoTime(), drain.replyTo()));
  }

  /**
   * Closes with 1001 the connections of every topic due by now, the i-th of n at i / n of the
   * drain spread, then waits for the next one due: however coarse the scheduler's tick, the
   * closes keep to the spread, several a tick when they are due that often.
   */
  private Behavior<Command> onDrainStep(DrainStep step) {
    int total = step.topics().size();
    long spread = shared.settings().drainSpread().toNanos();
    long elapsed = System.nanoTime() - step.startNanos();
    int due = elapsed >= spread ? total : (int) Math.min(total, elapsed * total / spread + 1);
    step.topics().subList(step.closed(), due).forEach(topic -> topic.tell(new TopicActor.CloseAll(CloseCodes.GOING_AWAY, "node draining")));
    if (due == total) {
      step.replyTo().tell(Done.getInstance());
    } else {
      long nextDue = due * spread / total;
      timers.startSingleTimer(new DrainStep(step.topics(), due, step.startNanos(), step.replyTo()), Duration.ofNanos(Math.max(0, nextDue - elapsed)));
    }
    return this;
  }

  private Behavior<Command> onReport(Report report) {
    List<List<ConnectionReport>> parts = ConnectionReport.inParts(shared.directory().reports(shared.node()), ConnectionReport.PART_BYTES);
    for (int i = 0; i < parts.size(); i++) {
      report.replyTo().tell(new NodeReport(shared.node(), parts.get(i), i == 0 ? List.copyOf(events) : List.of(), i, parts.size()));
    }
    return this;
  }

  /** A topic actor stopped as it was told to, idle. */
  private Behavior<Command> onTopicStopped(Terminated stopped) {
    topicOf.remove(stopped.getRef());
    return this;
  }

  /**
   * A topic actor failed (Pekko stops a typed actor that throws). It may have left connections
   * here that nothing would close any more (no deny, expiry or drain), while every join of its
   * topic would time out: they close with 1011 and leave the node's directory now (their own ends
   * would tell only the failed actor), and the next join of the topic gets a new topic actor and
   * claims the topic again.
   */
  private Behavior<Command> onTopicFailed(ChildFailed failed) {
    ActorRef<?> actor = failed.getRef();
    String topic = topicOf.remove(actor);
    Hosted hosted = topics.get(topic);
    if (hosted != null && hosted.actor().equals(actor)) {
      topics.remove(topic);
      book.release(topic);
    }
    shared.metrics().topicFaults.inc();
    record("failure", topic, "its topic actor failed; its connections closed with 1011");
    context.getLog().error("the actor of topic {} failed; closing its connections here with 1011", topic);
    for (Connection orphan : shared.directory().connections()) {
      if (actor.equals(orphan.topicActor())) {
        // counted as it ended or will end: by the client, or with the close it is sent (a close of the
        // topic's already sent, or 1011, which overtakes one still flushing)
        orphan.close(CloseCodes.INTERNAL_ERROR, "internal error");
        shared.directory().remove(orphan);
        int code = orphan.closeCode();
        String label = code != 0 ? String.valueOf(code) : "client";
        shared.metrics().connectionsClosed.labelValues(label).inc();
      }
    }
    return this;
  }

  private Behavior<Command> onTopicIdle(TopicIdle idle) {
    Hosted hosted = topics.get(idle.topic());
    if (hosted == null || !hosted.actor().equals(idle.actor())) {
      // an evicted incarnation: no join is routed to it any more
      idle.actor().tell(TopicActor.Stop.INSTANCE);
    } else if (hosted.joinsSent() == idle.joins()) {
      topics.remove(idle.topic());
      book.release(idle.topic());
      idle.actor().tell(TopicActor.Stop.INSTANCE);
    }
    return this;
  }
}
