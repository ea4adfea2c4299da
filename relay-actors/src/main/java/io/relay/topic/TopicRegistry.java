package io.relay.topic;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;

/**
 * This node's hosted topics: creates a topic actor on a topic's first connection, stops it when
 * its last one has left, and fans node-wide commands out to every topic.
 */
public final class TopicRegistry extends AbstractBehavior<TopicRegistry.Command> {

  /** Messages the registry understands. */
  public sealed interface Command {}

  /** Adds an accepted connection to its topic, creating the topic actor if needed. */
  public record Join(Connection connection, ActorRef<TopicActor.JoinResult> replyTo) implements Command {}

  /** Closes every connection of a denied booking with 4003, on this node. */
  public record CloseBooking(String bookingId) implements Command {}

  /** Closes every connection on this node with this code (drain). */
  public record CloseAll(int code, String reason) implements Command {}

  /** From a topic actor whose last connection left, having seen {@code joins} joins. */
  record TopicIdle(String topic, ActorRef<TopicActor.Command> actor, long joins)
      implements Command {}

  private record Hosted(ActorRef<TopicActor.Command> actor, long joinsSent) {}

  private final ActorContext<Command> context;
  private final TopicActor.Context shared;
  private final Map<String, Hosted> topics = new HashMap<>();
  private long incarnations;

  public static Behavior<Command> create(TopicActor.Context shared) {
    return Behaviors.setup(context -> new TopicRegistry(context, shared));
  }

  private TopicRegistry(ActorContext<Command> context, TopicActor.Context shared) {
    super(context);
    this.context = context;
    this.shared = shared;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Join.class, this::onJoin)
        .onMessage(CloseBooking.class, this::onCloseBooking)
        .onMessage(CloseAll.class, this::onCloseAll)
        .onMessage(TopicIdle.class, this::onTopicIdle)
        .build();
  }

  private Behavior<Command> onJoin(Join join) {
    String topic = join.connection().grant().topic();
    Hosted hosted = topics.get(topic);
    if (hosted == null) {
      hosted = new Hosted(spawnTopic(topic), 0);
    }
    topics.put(topic, new Hosted(hosted.actor(), hosted.joinsSent() + 1));
    hosted.actor().tell(new TopicActor.Join(join.connection(), join.replyTo()));
    return this;
  }

  private ActorRef<TopicActor.Command> spawnTopic(String topic) {
    String name =
        "topic-" + URLEncoder.encode(topic, StandardCharsets.UTF_8) + "-" + (++incarnations);
    return context.spawn(TopicActor.create(topic, context.getSelf(), shared), name);
  }

  private Behavior<Command> onCloseBooking(CloseBooking close) {
    topics.values().forEach(h -> h.actor().tell(new TopicActor.CloseBooking(close.bookingId())));
    return this;
  }

  private Behavior<Command> onCloseAll(CloseAll close) {
    topics.values().forEach(h -> h.actor().tell(new TopicActor.CloseAll(close.code(), close.reason())));
    return this;
  }

  private Behavior<Command> onTopicIdle(TopicIdle idle) {
    Hosted hosted = topics.get(idle.topic());
    if (hosted != null && hosted.actor().equals(idle.actor()) && hosted.joinsSent() == idle.joins()) {
      topics.remove(idle.topic());
      idle.actor().tell(TopicActor.Stop.INSTANCE);
    }
    return this;
  }
}
