package io.relay.http;

import io.relay.http.TokenVerifier.Claims;
import io.relay.http.log.WarningLimiter;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * Runs an access API handler for a verified token with the scope it needs, turning refusals into
 * JSON errors.
 */
final class AccessGuard {
  private final TokenVerifier verifier;
  private final WarningLimiter errors;

  /** @param errors where unexpected failures are logged, rate-limited since clients may cause them */
  AccessGuard(TokenVerifier verifier, WarningLimiter errors) {
    this.verifier = verifier;
    this.errors = errors;
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

  HttpResponse toResponse(Throwable failure) {
    return toResponse(failure, errors);
  }

  /** The JSON error for {@code failure}; an unexpected one is a 500, logged to {@code errors}. */
  static HttpResponse toResponse(Throwable failure, WarningLimiter errors) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof ApiException api) {
      return Json.error(api.status(), api.getMessage());
    }
    if (cause instanceof TimeoutException) {
      return Json.error(503, "the relay did not answer in time; try again");
    }
    errors.error("access request failed", cause);
    return Json.error(500, "internal error");
  }
}
