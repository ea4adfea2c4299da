package io.relay.status;

import io.relay.topic.ClusterEvent;
import io.relay.topic.ConnectionReport;
import io.relay.topic.TopicRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Gathers the connection reports of every relay node in the cluster: asks each node's topic
 * registry (found through the receptionist), collects the parts each answers with until all have
 * arrived or the timeout has passed, and names the relay members that did not answer in full
 * instead of leaving them out silently. One short-lived child per request.
 */
public final class ClusterStatus {
  /** Gathers the cluster's reports and answers with what arrived in time. */
  public record Gather(ActorRef<Gathered> replyTo) {}

  /** The cluster's reports and recent events, and the relay members that did not answer. */
  public record Gathered(List<ConnectionReport> reports, List<ClusterEvent> events, List<String> missingNodes) {}

  private static final Set<MemberStatus> SERVING = Set.of(MemberStatus.up(), MemberStatus.weaklyUp());

  private ClusterStatus() {}

  /** The node's status service: one child aggregation per request. */
  public static Behavior<Gather> create(Duration timeout) {
    return Behaviors.setup(
        context ->
            Behaviors.receiveMessage(
                gather -> {
                  context.spawnAnonymous(Aggregation.create(gather.replyTo(), timeout));
                  return Behaviors.same();
                }));
  }

  /** One request: find the registries, ask them all, answer once all answered or time is up. */
  private static final class Aggregation extends AbstractBehavior<Aggregation.Event> {
    sealed interface Event {}

    private record Found(Receptionist.Listing listing) implements Event {}

    private record Answered(TopicRegistry.NodeReport report) implements Event {}

    private enum Timeout implements Event {
      INSTANCE
    }

    private final ActorRef<Gathered> replyTo;
    private final Duration timeout;
    private final List<ConnectionReport> reports = new ArrayList<>();
    private final List<ClusterEvent> events = new ArrayList<>();
    private final Set<String> missing = new TreeSet<>();
    /** Per node that has begun answering, how many of its parts are still to come. */
    private final Map<String, Integer> partsToCome = new HashMap<>();
    /** Nodes asked that have not sent all their parts yet. */
    private final Set<String> unanswered = new TreeSet<>();
    private final TimerScheduler<Event> timers;
    private int pending = -1;

    static Behavior<Event> create(ActorRef<Gathered> replyTo, Duration timeout) {
      return Behaviors.setup(
          context ->
              Behaviors.withTimers(
                  timers -> {
                    timers.startSingleTimer(Timeout.INSTANCE, timeout.plus(timeout));
                    return new Aggregation(context, timers, replyTo, timeout);
                  }));
    }

    private Aggregation(ActorContext<Event> context, TimerScheduler<Event> timers, ActorRef<Gathered> replyTo, Duration timeout) {
      super(context);
      this.timers = timers;
      this.replyTo = replyTo;
      this.timeout = timeout;
      missing.addAll(relayMembers(context));
      ActorRef<Receptionist.Listing> listings = context.messageAdapter(Receptionist.Listing.class, Found::new);
      context.getSystem().receptionist().tell(Receptionist.find(TopicRegistry.STATUS_KEY, listings));
    }

    private static Set<String> relayMembers(ActorContext<?> context) {
      Set<String> members = new TreeSet<>();
      for (Member member : Cluster.get(context.getSystem()).state().getMembers()) {
        if (member.hasRole("relay") && SERVING.contains(member.status())) {
          members.add(member.address().toString());
        }
      }
      return members;
    }

    @Override
    public Receive<Event> createReceive() {
      return newReceiveBuilder()
          .onMessage(Found.class, this::onFound)
          .onMessage(Answered.class, this::onAnswered)
          .onMessage(Timeout.class, timeout -> finish())
          .build();
    }

    private Behavior<Event> onFound(Found found) {
      Set<ActorRef<TopicRegistry.Command>> registries = found.listing().getServiceInstances(TopicRegistry.STATUS_KEY);
      pending = registries.size();
      ActorRef<TopicRegistry.NodeReport> answers = getContext().messageAdapter(TopicRegistry.NodeReport.class, Answered::new);
      Address self = Cluster.get(getContext().getSystem()).selfMember().address();
      for (ActorRef<TopicRegistry.Command> registry : registries) {
        Address node = registry.path().address();
        unanswered.add((node.hasLocalScope() ? self : node).toString());
        registry.tell(new TopicRegistry.Report(answers));
      }
      // each registry has this long from now to send all its parts
      timers.startSingleTimer(Timeout.INSTANCE, timeout);
      return pending == 0 ? finish() : this;
    }

    private Behavior<Event> onAnswered(Answered answered) {
      TopicRegistry.NodeReport part = answered.report();
      reports.addAll(part.connections());
      events.addAll(part.events());
      int toCome = partsToCome.getOrDefault(part.node(), part.parts()) - 1;
      partsToCome.put(part.node(), toCome);
      if (toCome > 0) {
        return this;
      }
      missing.remove(part.node());
      unanswered.remove(part.node());
      return --pending == 0 ? finish() : this;
    }

    private Behavior<Event> finish() {
      missing.addAll(unanswered);
      events.sort(Comparator.comparing(ClusterEvent::at));
      replyTo.tell(new Gathered(List.copyOf(reports), List.copyOf(events), List.copyOf(missing)));
      return Behaviors.stopped();
    }
  }
}
