package io.relay.http;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * CORS for the access API (the Fetch standard's CORS protocol), for the origins of {@code
 * relay.cors-origins}: a preflight from an allowed origin gets 204 with the methods and headers the
 * API takes (Authorization and Content-Type, so the raw token and a JSON body may be sent); every
 * answer to an allowed origin, errors included, names that origin in {@code
 * Access-Control-Allow-Origin}. Other origins get no CORS headers (a preflight gets 403), so their
 * browsers keep the answer from the page. No credentials mode: tokens are sent by the page itself,
 * never as cookies.
 *
 * <p>Pekko HTTP's own CORS module ({@code pekko-http-cors}) is not served for Pekko HTTP 1.3.0 by
 * the registry this project builds from (only 1.1.0, which would mix Pekko HTTP versions); the few
 * rules the API needs are these.
 */
final class Cors extends AllDirectives {
  private final List<String> origins;
  private final long maxAgeSeconds;

  Cors(HttpSettings settings) {
    this.origins = settings.corsOrigins();
    this.maxAgeSeconds = settings.corsMaxAge().toSeconds();
  }

  /** {@code inner} (a sealed route) with CORS: preflights answered, answers marked for allowed origins. */
  Route wrap(Route inner) {
    if (origins.isEmpty()) {
      return inner;
    }
    return optionalHeaderValueByName(
        "Origin",
        origin ->
            mapResponse(
                response -> mark(response, origin),
                () -> origin.isEmpty() ? inner : concat(preflight(origin.get()), inner)));
  }

  private boolean allowed(String origin) {
    return origins.contains(HttpSettings.ANY_ORIGIN) || origins.contains(origin.toLowerCase(Locale.ROOT));
  }

  /** {@code OPTIONS} with {@code Access-Control-Request-Method}: a browser asking before it sends. */
  private Route preflight(String origin) {
    return options(() -> headerValueByName("Access-Control-Request-Method", method -> complete(preflightAnswer(origin))));
  }

  private HttpResponse preflightAnswer(String origin) {
    if (!allowed(origin)) {
      return Json.error(403, "this origin may not call the access API (relay.cors-origins)");
    }
    return HttpResponse.create()
        .withStatus(StatusCodes.NO_CONTENT)
        .addHeaders(
            List.<HttpHeader>of(
                RawHeader.create("Access-Control-Allow-Methods", "GET, POST"),
                RawHeader.create("Access-Control-Allow-Headers", "Authorization, Content-Type"),
                RawHeader.create("Access-Control-Max-Age", String.valueOf(maxAgeSeconds))));
  }

  /**
   * {@code response} to a request from {@code origin} as CORS has it: with CORS on, every answer
   * varies by Origin (a cache must not give one origin's answer to another), and an allowed
   * origin's may be read by its page, {@code X-Relay-Missing-Nodes} included.
   */
  HttpResponse mark(HttpResponse response, Optional<String> origin) {
    if (origins.isEmpty()) {
      return response;
    }
    HttpResponse varied = response.addHeader(RawHeader.create("Vary", "Origin"));
    if (origin.isEmpty() || !allowed(origin.get())) {
      return varied;
    }
    return varied.addHeaders(
        List.<HttpHeader>of(
            RawHeader.create("Access-Control-Allow-Origin", origin.get()),
            RawHeader.create("Access-Control-Expose-Headers", StatusRoutes.MISSING_NODES)));
  }
}
