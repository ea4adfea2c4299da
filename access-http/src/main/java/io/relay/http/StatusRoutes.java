package io.relay.http;

import io.relay.topic.ConnectionDirectory;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/** {@code GET /status}: connection reports, for holders of the relay:stats scope. */
final class StatusRoutes extends AllDirectives {
  private final AccessGuard guard;
  private final ConnectionDirectory directory;
  private final String node;

  StatusRoutes(AccessGuard guard, ConnectionDirectory directory, String node) {
    this.guard = guard;
    this.directory = directory;
    this.node = node;
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
                                guard.withScope(
                                    authorization,
                                    "relay:stats",
                                    claims ->
                                        CompletableFuture.completedFuture(
                                            Json.ok(directory.reports(node))))))));
  }
}
