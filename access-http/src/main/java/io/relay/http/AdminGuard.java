package io.relay.http;

import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Lets a request through to a route outside the access API (the management port's cluster writes)
 * only with an access token carrying {@code relay:admin}, checked exactly as the access API checks
 * tokens; refusals are the access API's JSON errors: 401 for a missing or invalid token, 403 for a
 * token without the scope.
 */
public final class AdminGuard extends AllDirectives {
  public static final String SCOPE = "relay:admin";

  private final TokenVerifier verifier;

  public AdminGuard(HttpSettings settings, TokenKeys keys) {
    this.verifier = new TokenVerifier(settings, keys, 0, () -> {}, () -> System.currentTimeMillis() / 1000); // no cache: each token checked in full
  }

  /** {@code inner} for a request with a valid {@code relay:admin} token, else a JSON refusal. */
  public Route authorize(Supplier<Route> inner) {
    return optionalHeaderValueByName(
        "Authorization",
        authorization -> {
          try {
            if (!verifier.verify(authorization).hasScope(SCOPE)) {
              return complete(Json.error(403, "token lacks the " + SCOPE + " scope"));
            }
          } catch (ApiException refused) {
            return complete(Json.error(refused.status(), refused.getMessage()));
          }
          return inner.get();
        });
  }

  /** A JSON error as the access API writes them: {@code {"code": N, "message": "..."}}. */
  public static HttpResponse error(int status, String message) {
    return Json.error(status, message);
  }
}
