package io.relay.http;

import io.relay.http.TokenVerifier.Claims;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs an access API handler for a verified token with the scope it needs, turning refusals into
 * JSON errors.
 */
final class AccessGuard {
  private static final Logger LOG = LoggerFactory.getLogger(AccessGuard.class);

  private final TokenVerifier verifier;

  AccessGuard(TokenVerifier verifier) {
    this.verifier = verifier;
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
      return handler.apply(claims).exceptionally(AccessGuard::toResponse);
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(toResponse(e));
    }
  }

  static HttpResponse toResponse(Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof ApiException api) {
      return Json.error(api.status(), api.getMessage());
    }
    if (cause instanceof TimeoutException) {
      return Json.error(503, "the relay did not answer in time; try again");
    }
    LOG.error("access request failed", cause);
    return Json.error(500, "internal error");
  }
}
