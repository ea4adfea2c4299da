package io.relay.http.server;

import static org.junit.jupiter.api.Assertions.assertSame;

import com.typesafe.config.ConfigFactory;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.relay.http.log.WarningLimiter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The client ports over real sockets on loopback: what a connection is told when the node stops accepting. */
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
}
