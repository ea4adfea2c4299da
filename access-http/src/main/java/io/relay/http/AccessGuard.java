package io.relay.http;

import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.optionalHeaderValueByName;

import io.relay.http.TokenVerifier.Claims;
import io.relay.http.log.WarningLimiter;
import io.relay.metrics.RelayMetrics;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Runs an access API handler for a verified token with the scope it needs, turning refusals into
 * JSON errors.
 *
 * @param errors where unexpected failures are logged, rate-limited since clients may cause them
 * @param metrics where answers of actors that came too late are counted
 */
record AccessGuard(TokenVerifier verifier, WarningLimiter errors, RelayMetrics metrics) {
  /** A route answering with {@link #withScope} for the request's {@code Authorization}. */
  Route route(String scope, Function<Claims, CompletionStage<HttpResponse>> handler) {
    return optionalHeaderValueByName(
        "Authorization", authorization -> completeWithFuture(withScope(authorization, scope, handler)));
  }

  /** Verifies the token, requires {@code scope} (or any scope when null), then runs the handler. */
  CompletionStage<HttpResponse> withScope(
      Optional<String> authorization,
      String scope,
      Function<Claims, CompletionStage<HttpResponse>> handler) {
    try {
      Claims claims = verifier.verify(authorization);
      if (scope != null && !claims.hasScope(scope)) {
        throw new ApiException(403, "token lacks the " + scope + " scope");
      }
      return handler.apply(claims).exceptionally(this::toResponse);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(toResponse(e));
    }
  }

  /** The JSON error for {@code failure}; an unexpected one is a 500, logged. */
  HttpResponse toResponse(Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof ApiException api) {
      return Json.error(api.status(), api.getMessage());
    }
    if (cause instanceof TimeoutException) {
      metrics.requestTimeouts.inc();
      return Json.error(503, "the relay did not answer in time; try again");
    }
    errors.error("access request failed", cause);
    return Json.error(500, "internal error");
  }
}
