package io.relay.http;

import io.relay.Ask;
import io.relay.status.ClusterStatus;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /status}: the connection reports of every relay node in the cluster, for holders of
 * the relay:stats scope. Relay members that do not answer in time are named in {@code
 * X-Relay-Missing-Nodes}, never silently left out.
 */
final class StatusRoutes extends AllDirectives {
  static final String MISSING_NODES = "X-Relay-Missing-Nodes";

  private final AccessGuard guard;
  private final ActorRef<ClusterStatus.Gather> status;
  private final Duration timeout;
  private final ActorSystem<?> system;

  /** @param timeout how long to wait for the whole gathering */
  StatusRoutes(AccessGuard guard, ActorRef<ClusterStatus.Gather> status, Duration timeout, ActorSystem<?> system) {
    this.guard = guard;
    this.status = status;
    this.timeout = timeout;
    this.system = system;
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
    return Ask.<ClusterStatus.Gather, ClusterStatus.Gathered>ask(status, ClusterStatus.Gather::new, timeout, system)
        .thenApply(
            gathered -> {
              HttpResponse response = Json.ok(gathered.reports());
              return gathered.missingNodes().isEmpty()
                  ? response
                  : response.addHeader(RawHeader.create(MISSING_NODES, String.join(",", gathered.missingNodes())));
            });
  }
}
