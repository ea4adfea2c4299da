package io.relay.topic;

import io.relay.RelaySettings;
import io.relay.deny.DenyList;
import io.relay.deny.DenyVerdicts;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.ws.CloseCodes;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * One hosted topic: owns its connections and their permissions, publishes its readers to the
 * {@link Room}, and closes them (deny, expiry, eviction, drain); if it fails, its registry closes
 * them (1011).
 */
public final class TopicActor extends AbstractBehavior<TopicActor.Command> {

  /** Messages a topic actor understands. */
  public sealed interface Command {}

  /** Adds an accepted connection; answers with the handler that will serve it. */
  public record Join(Connection connection, ActorRef<JoinResult> replyTo) implements Command {}

  /** The connection has ended. */
  public record Left(long connectionId, String reason) implements Command {}

  /** Closes the connections of a denied booking with 4003. */
  public record CloseBooking(String bookingId) implements Command {}

  /** Closes every connection of the topic with this code. */
  public record CloseAll(int code, String reason) implements Command {}

  /** From the registry: stop if still empty. */
  enum Stop implements Command {
    INSTANCE
  }

  private record Expire(long connectionId) implements Command {}

  private record AttachDeadline(long connectionId) implements Command {}

  /** What a join produced. */
  public sealed interface JoinResult {}

  /** Accepted: the handler to serve the connection's channel once the upgrade is answered. */
  public record Joined(ConnectionHandler handler) implements JoinResult {}

  /** Refused before the upgrade, with the HTTP status to answer and its message. */
  public record Refused(int status, String message, Duration retryAfter) implements JoinResult {}

  /** The longest a connection's expiry timer is set for; a later {@code exp} is checked again then. */
  static final Duration LONGEST_EXPIRY_WAIT = Duration.ofDays(1);

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final String topic;
  private final ActorRef<TopicRegistry.Command> registry;
  private final Context shared;
  private final Room room;
  private final Map<Long, Connection> members = new LinkedHashMap<>();
  private long joins;

  /** What every topic actor of a node shares, created by the node's guardian. */
  public record Context(
      RelaySettings settings,
      RelayMetrics metrics,
      MemoryBudget budget,
      ConnectionDirectory directory,
      String node,
      SpecialTopics specialTopics,
      DenyVerdicts denyVerdicts) {}

  static Behavior<Command> create(
      String topic, ActorRef<TopicRegistry.Command> registry, Context shared) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> new TopicActor(context, timers, topic, registry, shared)));
  }

  private TopicActor(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      String topic,
      ActorRef<TopicRegistry.Command> registry,
      Context shared) {
    super(context);
    this.context = context;
    this.timers = timers;
    this.topic = topic;
    this.registry = registry;
    this.shared = shared;
    context.setLoggerName(TopicActor.class);
    Room special = shared.specialTopics().roomFor(topic, context);
    this.room = special != null ? special : new Room(shared.metrics(), shared.budget());
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Join.class, this::onJoin)
        .onMessage(Left.class, this::onLeft)
        .onMessage(CloseBooking.class, this::onCloseBooking)
        .onMessage(CloseAll.class, this::onCloseAll)
        .onMessage(Expire.class, this::onExpire)
        .onMessage(AttachDeadline.class, this::onAttachDeadline)
        .onMessage(Stop.class, this::onStop)
        .build();
  }

  private Behavior<Command> onJoin(Join join) {
    joins++; // every join the registry sent, refused or not: it compares the count when the topic goes idle
    Connection connection = join.connection();
    try {
      join(connection, join.replyTo());
    } catch (RuntimeException fault) {
      // a fault in the node: this one join is refused, the topic's other connections go on
      if (members.remove(connection.id()) != null) {
        forget(connection);
      }
      shared.metrics().topicFaults.inc();
      context.getLog().error("joining a connection to topic {} failed; refused with 500", topic, fault);
      join.replyTo().tell(new Refused(500, "internal error", null));
    }
    if (members.isEmpty()) {
      registry.tell(new TopicRegistry.TopicIdle(topic, context.getSelf(), joins));
    }
    return this;
  }

  private void join(Connection connection, ActorRef<JoinResult> replyTo) {
    if (shared.denyVerdicts().verdict(connection.grant().bookingId()) == DenyList.Verdict.DENIED) {
      // denied after the admission checked it, before this join: the booking's close has passed here
      shared.metrics().codesRefused.labelValues("denied").inc();
      replyTo.tell(new Refused(403, "booking denied", null));
      return;
    }
    if (!connection.joined(room, context.getSelf())) {
      return; // its admission was given up: its client was refused
    }
    members.put(connection.id(), connection);
    publishReaders();
    shared.directory().add(connection);
    shared.metrics().connectionsOpened.inc();
    Connection.Grant grant = connection.grant();
    logEntry(connection).log("connection opened");
    timers.startSingleTimer(new Expire(connection.id()), untilExpiryCheck(Instant.now(), closesAt(grant)));
    timers.startSingleTimer(
        new AttachDeadline(connection.id()), shared.settings().attachTimeout());
    replyTo.tell(new Joined(new ConnectionHandler(connection, shared.settings(), shared.metrics(), shared.budget())));
  }

  private Behavior<Command> onLeft(Left left) {
    Connection connection = members.remove(left.connectionId());
    if (connection == null) {
      return this;
    }
    forget(connection);
    logEntry(connection)
        .addKeyValue("duration_s", Duration.between(connection.grant().connectedAt(), Instant.now()).toSeconds())
        .addKeyValue("reason", left.reason())
        .log("connection closed");
    int code = connection.closeCode();
    shared.metrics().connectionsClosed.labelValues(code == 0 ? "client" : String.valueOf(code)).inc();
    if (members.isEmpty()) {
      registry.tell(new TopicRegistry.TopicIdle(topic, context.getSelf(), joins));
    }
    return this;
  }

  /** A log entry about a connection, with the fields every such line carries (never a code or token). */
  private LoggingEventBuilder logEntry(Connection connection) {
    Connection.Grant grant = connection.grant();
    return context
        .getLog()
        .atInfo()
        .addKeyValue("topic", topic)
        .addKeyValue("booking", grant.bookingId())
        .addKeyValue("scopes", String.join(",", grant.scopes()))
        .addKeyValue("node", shared.node())
        .addKeyValue("remote", grant.remoteAddr())
        .addKeyValue("connection", connection.id());
  }

  private void forget(Connection connection) {
    publishReaders();
    connection.outbound().dispose();
    shared.directory().remove(connection);
    timers.cancel(new Expire(connection.id()));
    timers.cancel(new AttachDeadline(connection.id()));
  }

  private Behavior<Command> onCloseBooking(CloseBooking close) {
    for (Connection connection : members.values()) {
      if (close.bookingId().equals(connection.grant().bookingId())) {
        connection.close(CloseCodes.BOOKING_DENIED, "booking denied");
      }
    }
    return this;
  }

  private Behavior<Command> onCloseAll(CloseAll close) {
    members.values().forEach(c -> c.close(close.code(), close.reason()));
    return this;
  }

  private Behavior<Command> onExpire(Expire expire) {
    Connection connection = members.get(expire.connectionId());
    if (connection == null) {
      return this;
    }
    Instant now = Instant.now();
    if (now.isBefore(closesAt(connection.grant()))) {
      timers.startSingleTimer(expire, untilExpiryCheck(now, closesAt(connection.grant())));
    } else {
      connection.close(CloseCodes.TOKEN_EXPIRED, "token expired");
    }
    return this;
  }

  /**
   * When a connection closes with 4000: its token's {@code exp} and the clock skew allowance after
   * it; never, for an {@code exp} at the end of time.
   */
  private Instant closesAt(Connection.Grant grant) {
    Duration leeway = shared.settings().tokenLeeway();
    return grant.expiresAt().isAfter(Instant.MAX.minus(leeway)) ? Instant.MAX : grant.expiresAt().plus(leeway);
  }

  /**
   * How long until a connection's token expiry is next checked: at its {@code exp}, or after {@link
   * #LONGEST_EXPIRY_WAIT} if that is further off (Pekko's scheduler refuses a delay of more than
   * about 248 days, and a lab's own devices often hold tokens for a year), when it is checked again.
   */
  static Duration untilExpiryCheck(Instant now, Instant expiresAt) {
    Duration left = Duration.between(now, expiresAt);
    if (left.isNegative()) {
      return Duration.ZERO;
    }
    return left.compareTo(LONGEST_EXPIRY_WAIT) > 0 ? LONGEST_EXPIRY_WAIT : left;
  }

  private Behavior<Command> onAttachDeadline(AttachDeadline deadline) {
    Connection connection = members.get(deadline.connectionId());
    if (connection != null && !connection.isAttached()) {
      context.getSelf().tell(new Left(connection.id(), "upgrade never completed"));
    }
    return this;
  }

  private Behavior<Command> onStop(Stop stop) {
    return members.isEmpty() ? Behaviors.stopped() : this;
  }

  private void publishReaders() {
    room.setReaders(
        members.values().stream().filter(c -> c.grant().canRead()).toArray(Connection[]::new));
  }
}
