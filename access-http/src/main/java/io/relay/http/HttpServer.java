package io.relay.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import io.relay.http.log.ServerLog;
import io.relay.http.socket.SocketServer;
import io.relay.http.socket.OwnRequests;
import java.util.function.Supplier;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds one of the node's HTTP servers: logs the bound address, unbinds on coordinated shutdown,
 * and terminates the node if the port cannot be bound.
 */
public final class HttpServer {
  private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);

  private HttpServer() {}

  /**
   * Binds {@code route} on {@code host:port}.
   *
   * @param own the requests the node answers from its own reading of their heads on plain HTTP
   *     (the relay's upgrades, the access API's code requests), with no HTTP stream; over TLS, and
   *     for the requests it does not take, Pekko HTTP serves {@code route}, which answers the same
   * @param tls the HTTPS context, or empty for plain HTTP
   * @param sockets what the node's plain-HTTP ports share (connection limit, counters)
   * @param terminationDeadline how long coordinated shutdown lets open requests finish
   * @param logLimitInterval Pekko HTTP's warnings about requests and connections are logged once of
   *     a kind per this interval ({@link ServerLog})
   * @return the bound address
   */
  public static CompletionStage<InetSocketAddress> bind(
      ActorSystem<?> system,
      String name,
      String host,
      int port,
      Route route,
      OwnRequests own,
      Optional<HttpsConnectionContext> tls,
      SocketServer.Limits sockets,
      Duration terminationDeadline,
      Duration logLimitInterval) {
    Supplier<SocketServer> plain = () -> SocketServer.bind(system, host, port, route, own, sockets, logLimitInterval);
    return logged(
        system,
        name,
        host,
        port,
        tls.isPresent()
            ? bindPekko(system, host, port, route, tls.get(), terminationDeadline, logLimitInterval)
            : bindSockets(system, plain, terminationDeadline));
  }

  private static CompletionStage<InetSocketAddress> logged(
      ActorSystem<?> system, String name, String host, int port, CompletionStage<InetSocketAddress> bound) {
    return bound
        .thenApply(
            address -> {
              LOG.info("{} bound to {}", name, address);
              return address;
            })
        .whenComplete(
            (address, failure) -> {
              if (failure != null) {
                LOG.error("cannot bind {} to {}:{}; stopping the node", name, host, port, failure);
                system.terminate();
              }
            });
  }

  /** HTTPS: Pekko HTTP's own binding, on Pekko's TCP and TLS stages. */
  private static CompletionStage<InetSocketAddress> bindPekko(
      ActorSystem<?> system,
      String host,
      int port,
      Route route,
      HttpsConnectionContext tls,
      Duration terminationDeadline,
      Duration logLimitInterval) {
    return Http.get(system)
        .newServerAt(host, port)
        .enableHttps(tls)
        .withMaterializer(ClientStreams.materializer(system))
        .logTo(ServerLog.start(system, logLimitInterval))
        .bind(route)
        .thenApply(
            binding -> {
              binding.addToCoordinatedShutdown(terminationDeadline, system);
              return binding.localAddress();
            });
  }

  /** Plain HTTP: the node's own sockets ({@link SocketServer}), bound by {@code bind}. */
  private static CompletionStage<InetSocketAddress> bindSockets(
      ActorSystem<?> system, Supplier<SocketServer> bind, Duration terminationDeadline) {
    try {
      SocketServer server = bind.get();
      CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
      shutdown.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "http-unbind-" + server.localAddress(), server::unbind);
      shutdown.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "http-terminate-" + server.localAddress(), () -> server.terminate(terminationDeadline));
      return CompletableFuture.completedFuture(server.localAddress());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }
}
