package io.relay.http;

import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * {@code POST /session/{topic}}, the request every participant makes before it connects, answered
 * as {@link HttpApi#accessRoute} answers it but without the route tree: the same answer ({@link
 * SessionRoutes#answer}), a place at the same {@link AdmissionGate} (503 with {@code Retry-After}
 * past it) and the same CORS headers ({@link Cors}). A path with a percent-escape, or a request
 * with more than one {@code Authorization} or {@code Origin} field, is left to the route.
 *
 * <p>Why: a connect storm (W6) is one code request and one upgrade per participant, and the route
 * tree's work per request (its directives, the request's model) is a large part of an
 * admission's CPU (docs/benchmark-notes.md, "The network floor on Netty, step by step").
 *
 * @param busy the answer when the gate has no room
 */
record CodeRequests(SessionRoutes sessions, AdmissionGate gate, Cors cors, HttpResponse busy) {

  /** The answer to {@code request} when it is a code request, or null to leave it to the route. */
  CompletionStage<HttpResponse> answer(FullHttpRequest request) {
    if (!request.method().name().equals("POST")) {
      return null;
    }
    String path = new QueryStringDecoder(request.uri()).rawPath();
    List<String> authorization = request.headers().getAll("Authorization");
    List<String> origins = request.headers().getAll("Origin");
    if (!SessionRoutes.isSessionPath(path)
        || path.indexOf('%') >= 0
        || authorization.size() > 1
        || origins.size() > 1) {
      return null;
    }
    Optional<String> origin = origins.stream().findFirst();
    if (!gate.tryEnter()) {
      return CompletableFuture.completedFuture(cors.mark(busy, origin));
    }
    CompletionStage<HttpResponse> answer;
    try {
      answer = sessions.answer(authorization.stream().findFirst(), path.substring(SessionRoutes.PREFIX.length()));
    } catch (RuntimeException e) {
      gate.leave();
      throw e;
    }
    return answer.whenComplete((answered, failure) -> gate.leave()).thenApply(response -> cors.mark(response, origin));
  }
}
