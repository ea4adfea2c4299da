package io.relay.http.socket;

import java.util.Optional;
import org.apache.pekko.NotUsed;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.TLSProtocol;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * How a {@link SocketServer} port serves a route: Pekko HTTP's server layer (request parsing,
 * response rendering, keep-alive, the WebSocket upgrade) materialised per connection over the
 * connection's {@link SocketStage}, on the actor system's dispatcher: from the connection's first
 * byte, or from the first request the node did not answer itself ({@link RequestConnection}).
 */
final class HttpConnections {
  private final SocketServer server;
  private final Flow<HttpRequest, HttpResponse, NotUsed> handler;
  /**
   * Pekko HTTP's server layer, built once and materialised per connection (as Pekko's own binding
   * does): building it primes a header parser whose tables every connection then shares.
   */
  private final BidiFlow<HttpResponse, TLSProtocol.SslTlsOutbound, TLSProtocol.SslTlsInbound, HttpRequest, NotUsed> layer;

  HttpConnections(SocketServer server, Route route, LoggingAdapter log) {
    this.server = server;
    this.handler = route.flow(server.system());
    this.layer = Http.get(server.system()).serverLayer(server.settings(), Optional.empty(), log);
  }

  /** Serves {@code endpoint}'s connection, reading {@code unread} (bytes the node read already) first. */
  void serve(SocketEndpoint endpoint, ByteString unread) {
    server.system().executionContext().execute(() -> materialize(endpoint, unread));
  }

  private void materialize(SocketEndpoint endpoint, ByteString unread) {
    try {
      ClientStreams.run(handler.join(layer.join(Flow.fromGraph(SocketStage.http(endpoint, server.writeBufferBytes(), unread)))), server.materializer());
    } catch (RuntimeException e) {
      server.warnings().warn("could not start serving a connection", e);
      endpoint.close();
    }
  }
}
