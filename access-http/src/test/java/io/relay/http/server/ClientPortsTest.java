package io.relay.http.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.relay.http.log.WarningLimiter;
import io.relay.testing.TestCertificate;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The client ports over real sockets on loopback: what a connection is told when the node stops
 * accepting, and what a TLS client that never handshakes gets.
 */
class ClientPortsTest {
  private static final ActorTestKit KIT = ActorTestKit.create("client-ports");

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  /**
   * A connection the kernel accepted before the ports closed, whose pipeline is set up after
   * {@link ClientPorts#unbind} told the open connections, is told too: a kept access connection
   * would otherwise stay open until the unbind deadline instead of sending its client to another
   * node. The unbind here lands between the connection's accept and its pipeline's handlers.
   */
  @Test
  void aConnectionSetUpWhileThePortsStopAcceptingIsToldTheyStopped() throws Exception {
    ClientPorts ports =
        new ClientPorts(
            PortSettings.create(ConfigFactory.load()),
            WarningLimiter.start(KIT.system(), LoggerFactory.getLogger(ClientPortsTest.class), Duration.ofMinutes(1)));
    CompletableFuture<Object> told = new CompletableFuture<>();
    try {
      InetSocketAddress address =
          ports.bind(
              "127.0.0.1",
              0,
              Optional.empty(),
              pipeline -> {
                ports.unbind();
                pipeline.addLast(
                    new ChannelInboundHandlerAdapter() {
                      @Override
                      public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
                        told.complete(event);
                      }
                    });
              });
      try (Socket client = new Socket(address.getAddress(), address.getPort())) {
        assertSame(
            ClientPorts.UNBOUND,
            told.completeOnTimeout(null, 10, TimeUnit.SECONDS).join(),
            "the connection's handlers were told within 10 s that the ports stopped accepting");
      }
    } finally {
      ports.terminate(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * A TLS client that never starts its handshake is reset at the header timeout and counted
   * there, as on a plain port: the header timeout is the handshake's too. The timeout here is
   * longer than Netty's own handshake timeout (10 s), which would end the connection first, with
   * a plain close and uncounted.
   */
  @Test
  void aTlsClientThatNeverHandshakesIsResetAtTheHeaderTimeoutAndCounted(@TempDir Path dir) throws Exception {
    TestCertificate certificate = TestCertificate.create(dir);
    ClientPorts ports =
        new ClientPorts(
            PortSettings.create(ConfigFactory.parseMap(Map.of("relay.header-timeout", "11s")).withFallback(ConfigFactory.load())),
            WarningLimiter.start(KIT.system(), LoggerFactory.getLogger(ClientPortsTest.class), Duration.ofMinutes(1)));
    try {
      SslContext tls = SslContextBuilder.forServer(certificate.cert().toFile(), certificate.key().toFile()).build();
      InetSocketAddress address = ports.bind("127.0.0.1", 0, Optional.of(tls), pipeline -> {});
      try (Socket client = new Socket(address.getAddress(), address.getPort())) {
        client.setSoTimeout(20_000);
        SocketException reset = assertThrows(SocketException.class, () -> client.getInputStream().read(), "the connection is reset, not closed");
        assertTrue(reset.getMessage().contains("reset"), reset.getMessage());
      }
      assertEquals(1, ports.counters().headerTimeouts.sum(), "counted as a header timeout");
    } finally {
      ports.terminate(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }
}
