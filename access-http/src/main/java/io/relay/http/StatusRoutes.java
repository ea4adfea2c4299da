package io.relay.http;

import io.relay.topic.ConnectionReport;
import io.relay.topic.TopicRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /status}: the connection reports of every relay node in the cluster, for holders of
 * the relay:stats scope. Relay members that do not answer in time (or cannot be asked) are named
 * in {@code X-Relay-Missing-Nodes}, never silently left out.
 */
final class StatusRoutes extends AllDirectives {
  static final String MISSING_NODES = "X-Relay-Missing-Nodes";
  private static final Set<MemberStatus> SERVING = Set.of(MemberStatus.up(), MemberStatus.weaklyUp());

  private final AccessGuard guard;
  private final ActorSystem<?> system;
  private final Duration askTimeout;
  private final Duration statusTimeout;

  StatusRoutes(AccessGuard guard, ActorSystem<?> system, Duration askTimeout, Duration statusTimeout) {
    this.guard = guard;
    this.system = system;
    this.askTimeout = askTimeout;
    this.statusTimeout = statusTimeout;
  }

  Route route() {
    return path(
        "status",
        () ->
            get(
                () ->
                    optionalHeaderValueByName(
                        "Authorization",
                        authorization ->
                            completeWithFuture(
                                guard.withScope(authorization, "relay:stats", claims -> gather())))));
  }

  private CompletionStage<HttpResponse> gather() {
    return AskPattern.<Receptionist.Command, Receptionist.Listing>ask(
            system.receptionist(),
            replyTo -> Receptionist.find(TopicRegistry.STATUS_KEY, replyTo),
            askTimeout,
            system.scheduler())
        .thenCompose(listing -> collect(listing.getServiceInstances(TopicRegistry.STATUS_KEY)));
  }

  /**
   * Relay nodes the cluster lists as serving: a node the receptionist no longer offers (for
   * example while unreachable) is then reported missing instead of silently left out.
   */
  private Set<String> relayMembers() {
    Set<String> members = new TreeSet<>();
    for (Member member : Cluster.get(system).state().getMembers()) {
      if (member.hasRole("relay") && SERVING.contains(member.status())) {
        members.add(member.address().toString());
      }
    }
    return members;
  }

  private CompletionStage<HttpResponse> collect(Set<ActorRef<TopicRegistry.Command>> registries) {
    List<CompletableFuture<TopicRegistry.NodeReport>> asks = new ArrayList<>();
    for (ActorRef<TopicRegistry.Command> registry : registries) {
      asks.add(
          AskPattern.<TopicRegistry.Command, TopicRegistry.NodeReport>ask(
                  registry, TopicRegistry.Report::new, statusTimeout, system.scheduler())
              .toCompletableFuture()
              .exceptionally(failure -> new TopicRegistry.NodeReport(registry.path().address().toString(), null)));
    }
    return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
        .thenApply(
            done -> {
              List<ConnectionReport> reports = new ArrayList<>();
              Set<String> missing = new TreeSet<>(relayMembers());
              for (CompletableFuture<TopicRegistry.NodeReport> ask : asks) {
                TopicRegistry.NodeReport report = ask.join();
                if (report.connections() == null) {
                  missing.add(report.node());
                } else {
                  missing.remove(report.node());
                  reports.addAll(report.connections());
                }
              }
              HttpResponse response = Json.ok(reports);
              return missing.isEmpty()
                  ? response
                  : response.addHeader(RawHeader.create(MISSING_NODES, String.join(",", missing)));
            });
  }
}
