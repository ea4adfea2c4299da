package io.relay.http;

import static org.apache.pekko.http.javadsl.server.Directives.extractUnmatchedPath;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.Directives.reject;

import io.relay.Ask;
import io.relay.codes.CodeGrant;
import io.relay.codes.CodeStore;
import io.relay.deny.DenyCapacity;
import io.relay.deny.DenyVerdicts;
import io.relay.http.TokenVerifier.Claims;
import io.relay.metrics.RelayMetrics;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;

/** {@code POST /session/{topic}}: exchanges a session token for a one-time relay URI. */
record SessionRoutes(
    AccessGuard guard,
    HttpSettings settings,
    ActorRef<CodeStore.Command> codes,
    DenyVerdicts denyVerdicts,
    RelayMetrics metrics,
    ActorSystem<?> system) {
  /** The path of code requests and of relay upgrades; the topic follows it. */
  static final String PREFIX = "/session";

  /** Whether {@code path} is {@link #PREFIX} or a path below it ({@code /sessionlab} is another path). */
  static boolean isSessionPath(String path) {
    return path.equals(PREFIX) || path.startsWith(PREFIX + "/");
  }

  Route route() {
    return extractUnmatchedPath(path -> isSessionPath(path)
        ? post(() -> guard.route(null, claims -> issue(path.substring(PREFIX.length()), claims)))
        : reject());
  }

  /**
   * The answer to a code request with {@code authorization} for {@code path} (what follows {@code
   * /session}): the URI, or a JSON error; the stage never fails.
   */
  CompletionStage<HttpResponse> answer(Optional<String> authorization, String path) {
    return guard.withScope(authorization, null, claims -> issue(path, claims));
  }

  private CompletionStage<HttpResponse> issue(String path, Claims claims) {
    if (claims.topic().isEmpty()) {
      throw new ApiException(401, "token is missing the topic claim");
    }
    String topic = TopicPath.parse(path, metrics);
    if (!topic.equals(claims.topic())) {
      throw new ApiException(400, "path topic does not match the token's topic claim");
    }
    if (!claims.prefix().isEmpty() && !claims.prefix().equals("session")) {
      throw new ApiException(400, "token prefix must be session");
    }
    if (!claims.hasScope("read") && !claims.hasScope("write")) {
      throw new ApiException(403, "token needs the read or write scope");
    }
    if (claims.bookingId().isEmpty() && !settings.allowNoBookingId()) {
      throw new ApiException(401, "token is missing the booking_id claim");
    }
    if (!DenyCapacity.fits(claims.bookingId())) {
      metrics.limitRefusals.labelValues("booking_id_length").inc();
      throw new ApiException(400, "token booking_id must be at most " + DenyCapacity.MAX_BOOKING_ID_BYTES + " bytes (UTF-8)");
    }
    if (claims.scopes().size() > CodeGrant.MAX_SCOPES) {
      metrics.limitRefusals.labelValues("scopes").inc();
      throw new ApiException(400, "token may have at most " + CodeGrant.MAX_SCOPES + " scopes");
    }
    return switch (denyVerdicts.verdict(claims.bookingId())) {
      case DENIED -> throw new ApiException(400, "booking " + claims.bookingId() + " is deny-listed");
      case UNREAD -> throw ApiException.denyListUnread(metrics, "session");
      case ALLOWED -> store(topic, claims);
    };
  }

  private CompletionStage<HttpResponse> store(String topic, Claims claims) {
    return Ask.<CodeStore.Command, CodeStore.Issued>ask(
            codes,
            replyTo -> new CodeStore.Issue(topic, claims.scopes(), claims.bookingId(), claims.expiresAt(), replyTo),
            settings.askTimeout(),
            system)
        .thenApply(
            issued -> {
              if (!(issued instanceof CodeStore.Stored stored)) {
                metrics.writesFailed.labelValues("code").inc();
                return Json.error(503, "could not store the code; try again");
              }
              metrics.codesIssued.inc();
              return Json.ok(Map.of("uri", settings.url() + "/session/" + topic + "?code=" + stored.code()));
            });
  }
}
