package io.relay.status;

import io.relay.Ask;
import io.relay.RelaySettings;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.topic.Connection;
import io.relay.topic.Room;
import io.relay.topic.SpecialTopics;
import io.relay.ws.WsFrames;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The practable-compatible {@code stats} topic: its participants receive the cluster's connection
 * reports ({@link StatsFrames}) every {@code relay.stats-every} and whenever one of them sends
 * {@code {"cmd":"update"}}; nothing sent on it is relayed. Its room sends update requests to a
 * publisher, a child of the topic's actor, which gathers the reports from {@link ClusterStatus}
 * (one gathering at a time; a request during one is served by one more after it) and offers one
 * frame to every reader.
 */
public final class StatsTopic implements SpecialTopics {
  private final ActorRef<ClusterStatus.Gather> clusterStatus;
  private final RelaySettings settings;
  private final RelayMetrics metrics;
  private final MemoryBudget budget;

  public StatsTopic(ActorRef<ClusterStatus.Gather> clusterStatus, RelaySettings settings, RelayMetrics metrics, MemoryBudget budget) {
    this.clusterStatus = clusterStatus;
    this.settings = settings;
    this.metrics = metrics;
    this.budget = budget;
  }

  @Override
  public Room roomFor(String topic, ActorContext<?> topicActor) {
    if (!StatsFrames.STATS_TOPIC.equals(topic)) {
      return null;
    }
    StatsRoom room = new StatsRoom(metrics, budget);
    room.publisher = topicActor.spawn(publisher(room), "stats-publisher");
    return room;
  }

  /** The stats topic's room: an update request goes to the publisher, nothing is relayed. */
  private static final class StatsRoom extends Room {
    private ActorRef<Message> publisher;

    StatsRoom(RelayMetrics metrics, MemoryBudget budget) {
      super(metrics, budget);
    }

    @Override
    public boolean takesMessagesWithoutWrite() {
      return true; // a participant of stats with read alone may ask for an update
    }

    @Override
    public void fanOut(Connection sender, WsFrames.Frame frame) {
      if (StatsFrames.isUpdateRequest(frame.payload())) {
        publisher.tell(Publish.REQUESTED);
      }
    }
  }

  /** What the publisher is told: publish (on schedule or on request), or the gathered reports. */
  private interface Message {}

  private enum Publish implements Message {
    REQUESTED
  }

  private record Gathered(ClusterStatus.Gathered gathered) implements Message {}

  private Behavior<Message> publisher(Room room) {
    return Behaviors.<Message>setup(
            context ->
                Behaviors.withTimers(
                    timers -> {
                      timers.startTimerWithFixedDelay(Publish.REQUESTED, settings.statsEvery());
                      return idle(context, room);
                    }));
  }

  /** Not gathering: a request starts a gathering. */
  private Behavior<Message> idle(ActorContext<Message> context, Room room) {
    return Behaviors.receive(Message.class)
        .onMessageEquals(Publish.REQUESTED, () -> gather(context, room, false))
        .build();
  }

  /** Gathering; {@code again}: a request came meanwhile, so gather once more after this one. */
  private Behavior<Message> gathering(ActorContext<Message> context, Room room, boolean again) {
    return Behaviors.receive(Message.class)
        .onMessageEquals(Publish.REQUESTED, () -> gathering(context, room, true))
        .onMessage(Gathered.class, gathered -> published(context, room, gathered, again))
        .build();
  }

  private Behavior<Message> gather(ActorContext<Message> context, Room room, boolean again) {
    Ask.<Message, ClusterStatus.Gather, ClusterStatus.Gathered>fromActor(
        context,
        clusterStatus,
        ClusterStatus.Gather::new,
        settings.statusAnswerTimeout(),
        (gathered, failure) -> new Gathered(gathered != null ? gathered : new ClusterStatus.Gathered(List.of(), List.of(), List.of())));
    return gathering(context, room, again);
  }

  private Behavior<Message> published(ActorContext<Message> context, Room room, Gathered gathered, boolean again) {
    WsFrames.Frame frame = WsFrames.frame(WsFrames.TEXT, StatsFrames.render(gathered.gathered().reports()));
    for (Connection reader : room.readers()) {
      metrics.framesDropped.inc(reader.outbound().offer(frame));
    }
    return again ? gather(context, room, false) : idle(context, room);
  }
}
