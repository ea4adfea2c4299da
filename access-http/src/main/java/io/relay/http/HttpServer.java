package io.relay.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.HttpsConnectionContext;
import org.apache.pekko.http.javadsl.ServerBuilder;
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
   * @param tls the HTTPS context, or empty for plain HTTP
   * @param terminationDeadline how long coordinated shutdown lets open requests finish
   * @return the bound address
   */
  public static CompletionStage<InetSocketAddress> bind(
      ActorSystem<?> system,
      String name,
      String host,
      int port,
      Route route,
      Optional<HttpsConnectionContext> tls,
      Duration terminationDeadline) {
    ServerBuilder builder = Http.get(system).newServerAt(host, port);
    return tls.map(builder::enableHttps).orElse(builder)
        .bind(route)
        .thenApply(
            binding -> {
              binding.addToCoordinatedShutdown(terminationDeadline, system);
              LOG.info("{} bound to {}", name, binding.localAddress());
              return binding.localAddress();
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
