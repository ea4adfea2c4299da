package io.relay.status;

import io.relay.topic.ClusterEvent;
import io.relay.topic.ConnectionReport;
import io.relay.topic.TopicRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Gathers the connection reports of every relay node in the cluster: asks each node's topic
 * registry (found through the receptionist) with a timeout, and names the relay members that did
 * not answer instead of leaving them out silently. One short-lived child per request.
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

    private record Failed(String node) implements Event {}

    private enum Timeout implements Event {
      INSTANCE
    }

    private final ActorRef<Gathered> replyTo;
    private final Duration timeout;
    private final List<ConnectionReport> reports = new ArrayList<>();
    private final List<ClusterEvent> events = new ArrayList<>();
    private final Set<String> missing = new TreeSet<>();
    private int pending = -1;

    static Behavior<Event> create(ActorRef<Gathered> replyTo, Duration timeout) {
      return Behaviors.setup(
          context ->
              Behaviors.withTimers(
                  timers -> {
                    timers.startSingleTimer(Timeout.INSTANCE, timeout.plus(timeout));
                    return new Aggregation(context, replyTo, timeout);
                  }));
    }

    private Aggregation(ActorContext<Event> context, ActorRef<Gathered> replyTo, Duration timeout) {
      super(context);
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
          .onMessage(Failed.class, this::onFailed)
          .onMessage(Timeout.class, timeout -> finish())
          .build();
    }

    private Behavior<Event> onFound(Found found) {
      Set<ActorRef<TopicRegistry.Command>> registries = found.listing().getServiceInstances(TopicRegistry.STATUS_KEY);
      pending = registries.size();
      for (ActorRef<TopicRegistry.Command> registry : registries) {
        String node = registry.path().address().toString();
        getContext()
            .ask(
                TopicRegistry.NodeReport.class,
                registry,
                timeout,
                TopicRegistry.Report::new,
                (report, failure) -> report != null ? new Answered(report) : new Failed(node));
      }
      return pending == 0 ? finish() : this;
    }

    private Behavior<Event> onAnswered(Answered answered) {
      missing.remove(answered.report().node());
      reports.addAll(answered.report().connections());
      events.addAll(answered.report().events());
      return --pending == 0 ? finish() : this;
    }

    private Behavior<Event> onFailed(Failed failed) {
      missing.add(failed.node());
      return --pending == 0 ? finish() : this;
    }

    private Behavior<Event> finish() {
      events.sort(Comparator.comparing(ClusterEvent::at));
      replyTo.tell(new Gathered(List.copyOf(reports), List.copyOf(events), List.copyOf(missing)));
      return Behaviors.stopped();
    }
  }
}
