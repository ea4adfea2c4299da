package io.relay.http;

import io.relay.http.socket.OwnRequests;
import io.relay.http.socket.PlainResponse;
import io.relay.http.socket.RequestHead;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * {@code POST /session/{topic}} on a plain access port, answered from the node's own reading of
 * the request head ({@link OwnRequests}) with no HTTP stream per connection: the answers of
 * {@link SessionRoutes} (which serves the same request over HTTPS), a place at the same {@link
 * AdmissionGate}, the same CORS headers ({@link Cors}). A path with a percent-escape, or a head
 * with more than one {@code Authorization} or {@code Origin} field, is left to the route.
 *
 * @param busy the answer when the gate has no room
 */
record SessionRequests(SessionRoutes sessions, AdmissionGate gate, Cors cors, HttpResponse busy) implements OwnRequests {
  private static final String PREFIX = "/session";

  @Override
  public boolean takes(RequestHead head) {
    String path = head.path();
    return head.method().equals("POST")
        && (path.equals(PREFIX) || path.startsWith(PREFIX + "/"))
        && path.indexOf('%') < 0
        && head.count("Authorization") <= 1
        && head.count("Origin") <= 1;
  }

  @Override
  public CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer) {
    Optional<String> origin = Optional.ofNullable(head.header("Origin"));
    boolean keepAlive = head.keepAlive();
    if (!gate.tryEnter()) {
      return CompletableFuture.completedFuture(render(cors.mark(busy, origin), keepAlive));
    }
    CompletionStage<HttpResponse> response;
    try {
      response = sessions.answer(Optional.ofNullable(head.header("Authorization")), head.path().substring(PREFIX.length()));
    } catch (RuntimeException e) {
      gate.leave();
      throw e;
    }
    return response.whenComplete((answered, failure) -> gate.leave()).thenApply(r -> render(cors.mark(r, origin), keepAlive));
  }

  /** {@code response} (a strict entity, as the access API's JSON answers are) as bytes on the wire. */
  private static Answer render(HttpResponse response, boolean keepAlive) {
    HttpEntity.Strict entity = (HttpEntity.Strict) response.entity();
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    for (HttpHeader header : response.getHeaders()) {
      headers.add(Map.entry(header.name(), header.value()));
    }
    byte[] bytes =
        PlainResponse.render(
            response.status().intValue(),
            response.status().reason(),
            headers,
            entity.getContentType().toString(),
            entity.getData().toArray(),
            !keepAlive);
    return keepAlive ? Answer.keepingAlive(bytes) : Answer.closing(bytes);
  }
}
