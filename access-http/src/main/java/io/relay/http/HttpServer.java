package io.relay.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import io.relay.http.log.ServerLog;
import io.relay.http.socket.SocketServer;
import io.relay.http.socket.OwnRequests;
import javax.net.ssl.SSLContext;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
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
   * Binds {@code host:port} on the node's own sockets ({@link SocketServer}).
   *
   * @param route what Pekko HTTP serves: the requests {@code own} does not take; null when {@code
   *     own} answers every request (the relay port)
   * @param own the requests the node answers from its own reading of their heads (the relay's
   *     upgrades, the access API's code requests), with no HTTP stream
   * @param tls the context of HTTPS and WSS, or empty for plain HTTP
   * @param sockets what the node's client ports share (connection limit, counters)
   * @param terminationDeadline how long coordinated shutdown lets open requests finish
   * @param logLimitInterval warnings about requests and connections (Pekko HTTP's among them) are
   *     logged once of a kind per this interval ({@link ServerLog})
   * @return the bound address
   */
  public static CompletionStage<InetSocketAddress> bind(
      ActorSystem<?> system,
      String name,
      String host,
      int port,
      Route route,
      OwnRequests own,
      Optional<SSLContext> tls,
      SocketServer.Limits sockets,
      Duration terminationDeadline,
      Duration logLimitInterval) {
    CompletionStage<InetSocketAddress> bound;
    try {
      SocketServer server = SocketServer.bind(system, host, port, route, own, tls.orElse(null), sockets, logLimitInterval);
      CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
      shutdown.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "http-unbind-" + server.localAddress(), server::unbind);
      shutdown.addTask(CoordinatedShutdown.PhaseServiceRequestsDone(), "http-terminate-" + server.localAddress(), () -> server.terminate(terminationDeadline));
      bound = CompletableFuture.completedFuture(server.localAddress());
    } catch (RuntimeException e) {
      bound = CompletableFuture.failedFuture(e);
    }
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
}
