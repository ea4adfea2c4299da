package io.relay.http.socket;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import com.typesafe.config.Config;
import javax.net.ssl.SSLContext;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;

/** What the socket tests do with plain sockets against a {@link SocketServer} on loopback, and how they end. */
final class TestSockets {
  /** How long a test's socket waits for the server, and the system for its termination. */
  static final Duration DEADLINE = Duration.ofSeconds(10);

  private TestSockets() {}

  /** A socket connected to {@code server}, reads timing out after {@link #DEADLINE}. */
  static Socket connect(SocketServer server) throws IOException {
    Socket socket = new Socket();
    socket.setSoTimeout((int) DEADLINE.toMillis());
    socket.connect(new InetSocketAddress("127.0.0.1", server.localAddress().getPort()));
    return socket;
  }

  static void send(Socket socket, String text) throws IOException {
    socket.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  /**
   * Binds {@code route} and {@code own} (null: none) on a free loopback port, over TLS with {@code
   * tls} (null: plain), with {@code config}'s socket limits.
   */
  static SocketServer bind(ActorSystem<?> system, Config config, Route route, OwnRequests own, SSLContext tls) {
    return SocketServer.bind(
        system, "127.0.0.1", 0, route, own, tls, SocketServer.Limits.create(SocketSettings.create(config)), Duration.ofSeconds(10));
  }

  /** {@code GET /hello}, {@code GET /big} (answered with {@code big}) and {@link #countRoute}. */
  static Route route(Materializer materializer, byte[] big) {
    return Directives.concat(
        Directives.path("hello", () -> Directives.get(() -> Directives.complete("hello"))),
        Directives.path(
            "big",
            () -> Directives.get(() -> Directives.complete(HttpResponse.create().withEntity(ContentTypes.APPLICATION_OCTET_STREAM, big)))),
        countRoute(materializer));
  }

  /** {@code POST /count}: answers with how many bytes the request's body had, read as a stream. */
  static Route countRoute(Materializer materializer) {
    return Directives.path(
        "count",
        () ->
            Directives.post(
                () ->
                    Directives.extractRequestEntity(
                        entity ->
                            Directives.onSuccess(
                                entity.getDataBytes().runFold(0L, (n, bytes) -> n + bytes.size(), materializer),
                                n -> Directives.complete(Long.toString(n))))));
  }

  /** Terminates {@code system} (if started) and waits for it. */
  static void terminate(ActorSystem<?> system) throws Exception {
    if (system != null) {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }
  }
}
