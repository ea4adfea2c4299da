package io.relay.http;

import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslContext;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.ClientPorts;
import io.relay.http.server.PortSettings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the node's client ports ({@link ClientPorts}) within its life: they stop accepting in
 * coordinated shutdown's unbind phase, close what is still open after the termination deadline,
 * and a port that cannot be bound terminates the node ({@link CannotBind}).
 */
public final class HttpServer {
  private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);

  /** Why the node stops when one of its ports cannot be bound: bad configuration, exit status 2 (application.conf). */
  public enum CannotBind implements CoordinatedShutdown.Reason { INSTANCE }

  private HttpServer() {}

  /**
   * Starts the event loops of the node's client ports.
   *
   * @param terminationDeadline how long coordinated shutdown lets open connections finish
   * @param logLimitInterval the interval of the ports' rate-limited log lines
   */
  public static ClientPorts start(ActorSystem<?> system, PortSettings settings, Duration terminationDeadline, Duration logLimitInterval) {
    ClientPorts ports = new ClientPorts(settings, WarningLimiter.start(system, LoggerFactory.getLogger(ClientPorts.class), logLimitInterval));
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    shutdown.addTask(CoordinatedShutdown.PhaseServiceUnbind(), "client-ports-unbind", ports::unbind);
    shutdown.addTask(
        CoordinatedShutdown.PhaseServiceRequestsDone(), "client-ports-terminate", () -> ports.terminate(terminationDeadline));
    system.getWhenTerminated().thenRun(() -> ports.terminate(Duration.ZERO));
    return ports;
  }

  /**
   * Binds {@code host:port} on {@code ports}, with TLS first when {@code tls} is given and then
   * what {@code http} sets up on each connection.
   *
   * @return the bound address
   */
  public static CompletionStage<InetSocketAddress> bind(
      ActorSystem<?> system,
      ClientPorts ports,
      String name,
      String host,
      int port,
      Optional<SslContext> tls,
      Consumer<ChannelPipeline> http) {
    try {
      InetSocketAddress address = ports.bind(host, port, tls, http);
      LOG.info("{} bound to {}", name, address);
      return CompletableFuture.completedFuture(address);
    } catch (Exception e) { // Netty's native transport throws its IOException unchecked
      LOG.error("cannot bind {} to {}:{}; stopping the node", name, host, port, e);
      CoordinatedShutdown.get(system).run(CannotBind.INSTANCE);
      return CompletableFuture.failedFuture(e);
    }
  }
}
