package io.relay.http;

import io.relay.ws.Handshake;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.impl.engine.server.UpgradeToOtherProtocolResponseHeader;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.model.headers.SecWebSocketProtocol;
import org.apache.pekko.http.javadsl.model.ws.WebSocketUpgrade;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * {@code GET /session/{topic}?code=C} as a Pekko HTTP route, for relay ports that Pekko HTTP
 * serves (HTTPS): the client is admitted by {@link Admission}, as on plain ports ({@link
 * RelayHandshake}), and refused with a plain status and a one-line body before the upgrade.
 *
 * <p>Pekko HTTP checks the upgrade request (its {@link WebSocketUpgrade} attribute); the relay
 * answers the handshake itself and runs its own WebSocket stage over the connection's bytes
 * inside Pekko HTTP's connection.
 */
final class RelayRoutes extends AllDirectives {
  private final Admission admission;

  RelayRoutes(Admission admission) {
    this.admission = admission;
  }

  Route route() {
    return pathPrefix(
        "session",
        () ->
            extractUnmatchedPath(
                path ->
                    get(
                        () ->
                            extractRequest(
                                request ->
                                    parameterOptional(
                                        "code",
                                        code ->
                                            completeWithFuture(
                                                accept(path, code.orElse(null), request)
                                                    .exceptionally(failure -> text(admission.refusal(failure)))))))));
  }

  private CompletionStage<HttpResponse> accept(String path, String code, HttpRequest request) {
    String topic;
    WebSocketUpgrade upgrade;
    try {
      topic = admission.topic(path);
      upgrade = request.getAttribute(AttributeKeys.webSocketUpgrade).orElse(null);
      if (upgrade == null) {
        String version = request.getHeader("Sec-WebSocket-Version").map(h -> h.value()).orElse(null);
        throw Handshake.otherVersion(version)
            ? new ApiException(426, "unsupported WebSocket version; this server speaks " + Handshake.VERSION)
            : new ApiException(400, "expected a WebSocket upgrade");
      }
    } catch (ApiException e) {
      return CompletableFuture.failedFuture(e);
    }
    String userAgent = request.getHeader("User-Agent").map(h -> h.value()).orElse("");
    return admission.admit(topic, code, userAgent, remoteAddress(request)).thenApply(flow -> upgrade(flow, request, upgrade));
  }

  private static HttpResponse upgrade(
      Graph<FlowShape<ByteString, ByteString>, ?> flow, HttpRequest request, WebSocketUpgrade upgrade) {
    boolean wantsNull = false;
    for (String protocol : upgrade.getRequestedProtocols()) {
      wantsNull |= Handshake.NULL_PROTOCOL.equals(protocol);
    }
    String key = request.getHeader("Sec-WebSocket-Key").map(h -> h.value()).orElseThrow();
    HttpResponse switching =
        HttpResponse.create()
            .withStatus(StatusCodes.SWITCHING_PROTOCOLS)
            .addHeader(RawHeader.create("Upgrade", "websocket"))
            .addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("Upgrade"))
            .addHeader(RawHeader.create("Sec-WebSocket-Accept", Handshake.accept(key)));
    if (wantsNull) {
      switching = switching.addHeader(SecWebSocketProtocol.create(Handshake.NULL_PROTOCOL));
    }
    // Pekko HTTP runs the connection's flow over its TLS stage once the 101 is written
    Flow<ByteString, ByteString, ?> protocol = Flow.fromGraph(flow);
    @SuppressWarnings("unchecked")
    org.apache.pekko.stream.scaladsl.Flow<ByteString, ByteString, Object> scalaFlow =
        (org.apache.pekko.stream.scaladsl.Flow<ByteString, ByteString, Object>) (Object) protocol.asScala();
    return switching.addHeader(new UpgradeToOtherProtocolResponseHeader(scalaFlow));
  }

  /** The first X-Forwarded-For entry, else the peer's address. */
  private static String remoteAddress(HttpRequest request) {
    Optional<String> forwarded =
        request.getHeader("X-Forwarded-For").map(h -> h.value().split(",")[0].trim()).filter(s -> !s.isEmpty());
    return forwarded.orElseGet(
        () ->
            request
                .getAttribute(AttributeKeys.remoteAddress)
                .flatMap(a -> a.getAddress())
                .map(a -> a.getHostAddress())
                .orElse("unknown"));
  }

  private static HttpResponse text(Admission.Refusal refusal) {
    HttpResponse response = text(refusal.status(), refusal.line());
    for (var header : refusal.headers().entrySet()) {
      response = response.addHeader(RawHeader.create(header.getKey(), header.getValue()));
    }
    return response;
  }

  static HttpResponse text(int status, String line) {
    return HttpResponse.create()
        .withStatus(StatusCodes.get(status))
        .withEntity(ContentTypes.TEXT_PLAIN_UTF8, line + "\n");
  }
}
