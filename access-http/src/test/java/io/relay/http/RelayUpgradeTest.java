package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Future;
import io.relay.RelaySettings;
import io.relay.codes.CodeGrant;
import io.relay.codes.CodeStore;
import io.relay.deny.DenyList;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.ClientPorts;
import io.relay.http.server.PortSettings;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.Await;
import io.relay.testing.TestCertificate;
import io.relay.topic.ClaimAnnouncement;
import io.relay.topic.ConnectionDirectory;
import io.relay.topic.SpecialTopics;
import io.relay.topic.TopicActor;
import io.relay.topic.TopicRegistry;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The relay port's upgrade over real sockets on loopback, plain and TLS, with probes for the
 * node's actors: what a client gets while its admission runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RelayUpgradeTest {
  private static final Duration HEADER_TIMEOUT = Duration.ofSeconds(1);
  private static final Config CONFIG =
      ConfigFactory.parseMap(Map.of("relay.header-timeout", HEADER_TIMEOUT.toMillis() + "ms", "relay.ask-timeout", "30s"))
          .withFallback(ConfigFactory.load());
  private static final String HEAD =
      "GET /session/lab/camera?code=some-code HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  /** A masked text frame, "hello". */
  private static final byte[] FRAME = {(byte) 0x81, (byte) 0x85, 0x37, (byte) 0xfa, 0x21, 0x3d, 0x7f, (byte) 0x9f, 0x4d, 0x51, 0x58};

  private final ActorTestKit kit = ActorTestKit.create("relay-upgrade");
  private final EventLoopGroup clientLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private TestCertificate certificate;

  @BeforeAll
  void makeCertificate(@TempDir Path dir) throws Exception {
    certificate = TestCertificate.create(dir);
  }

  @AfterAll
  void stop() {
    clientLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    kit.shutdownTestKit();
  }

  /**
   * The upgrade request and a frame behind it arrive in one read as two TLS records, and the code
   * is redeemed after three header timeouts: the client gets the admission's answer, not a reset.
   * The header timeout is for the head alone; the admission has timeouts of its own. The node's
   * TLS context is the one it serves with: on BoringSSL, whose engine hands on each record as it
   * decrypts it, the frame's bytes reach the connection's handlers after its head.
   */
  @Test
  void bytesAfterTheHeadDoNotStartTheHeaderTimeoutAgainWhileTheAdmissionRuns() throws Exception {
    try (RelayPort port = new RelayPort(true)) {
      HeldClient client = HeldClient.connect(clientLoop, port.address, certificate);
      client.sendInOneWrite(HEAD.getBytes(StandardCharsets.US_ASCII), FRAME);

      CodeStore.Redeem redeem = port.codes.expectMessageClass(CodeStore.Redeem.class, Duration.ofSeconds(10));
      Await.pause(3 * HEADER_TIMEOUT.toMillis()); // the admission is this slow
      redeem.replyTo().tell(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN));

      String answer = Await.value("the client gets an answer or a reset", Duration.ofSeconds(10), client.received);
      assertTrue(answer.startsWith("HTTP/1.1 401 "), "the client got the admission's refusal, not a reset; it got: " + answer);
      assertEquals(0, port.ports.counters().headerTimeouts.sum(), "no connection timed out waiting for a head");
    }
  }

  /**
   * {@code X-Forwarded-For} names the client in the node's reports; one that holds no address
   * (only commas) leaves the peer's address there, and the upgrade goes on to its admission and
   * its answer, giving its place at the admission gate back.
   */
  @Test
  void anUpgradeWhoseForwardedForHoldsNoAddressIsAnsweredAndLeavesTheGate() throws Exception {
    try (RelayPort port = new RelayPort(false);
        Socket client = new Socket(port.address.getAddress(), port.address.getPort())) {
      client.setSoTimeout(10_000);
      client.getOutputStream().write(HEAD.replace("\r\n\r\n", "\r\nX-Forwarded-For: ,\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      port.codes.expectMessageClass(CodeStore.Redeem.class, Duration.ofSeconds(10)).replyTo().tell(new CodeStore.Rejected(CodeStore.Reason.UNKNOWN));
      String answer = new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertTrue(answer.startsWith("HTTP/1.1 401 "), "the client got the admission's refusal; it got: " + answer);
      assertEquals(0, port.gate.inFlight(), "the upgrade's place at the admission gate is free again");
    }
  }

  /**
   * A code whose issuer did not confirm its claim in time (the issuer cut off from this node) is
   * answered 503 with {@code Retry-After}: the client asks for a new code, which this side issues.
   */
  @Test
  void aCodeItsIssuerDidNotConfirmInTimeGets503WithRetryAfterAndIsCounted() throws Exception {
    try (RelayPort port = new RelayPort(false);
        Socket client = new Socket(port.address.getAddress(), port.address.getPort())) {
      client.setSoTimeout(10_000);
      client.getOutputStream().write(HEAD.getBytes(StandardCharsets.US_ASCII));
      port.codes.expectMessageClass(CodeStore.Redeem.class, Duration.ofSeconds(10)).replyTo().tell(new CodeStore.Rejected(CodeStore.Reason.UNAVAILABLE));
      String answer = new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertTrue(answer.startsWith("HTTP/1.1 503 ") && answer.contains("\r\nRetry-After: 1\r\n"), "503 with Retry-After; it got: " + answer);
      assertEquals(1.0, port.metrics.codesRefused.labelValues("unavailable").get(), "counted as unavailable");
    }
  }

  /**
   * A client that stops partway through its head's fields is reset at the header timeout, counted
   * there, and not counted or logged as a malformed request.
   */
  @Test
  void aHeadCutOffByTheHeaderTimeoutIsNoMalformedRequest() throws Exception {
    try (RelayPort port = new RelayPort(false);
        Socket client = new Socket(port.address.getAddress(), port.address.getPort())) {
      client.getOutputStream().write("GET /session/lab/camera?code=some-code HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: web".getBytes(StandardCharsets.US_ASCII));
      Await.until(
          "the connection is reset at the header timeout, and counted there",
          Duration.ofSeconds(10),
          () -> port.ports.counters().headerTimeouts.sum() == 1 && port.ports.connections() == 0);
      for (EventLoop loop : port.ports.loops()) { // behind what the close left on the connection's loop
        loop.submit(() -> {}).get(10, TimeUnit.SECONDS);
      }
      assertEquals(0, port.ports.counters().malformedHeads.sum(), "not counted as malformed");
    }
  }

  /**
   * An admitted connection whose move to its topic's event loop fails (its client gone in that
   * instant; here the loop is one that cannot take a socket, Netty's in-process transport's) ends,
   * and its topic drops it at once, not at the attach timeout (10 s) as a connection that never came.
   */
  @Test
  void anAdmittedConnectionThatCannotMoveToItsTopicsLoopLeavesItsTopicAtOnce() throws Exception {
    ConnectionDirectory directory = new ConnectionDirectory();
    TopicActor.Context topics =
        new TopicActor.Context(
            RelaySettings.create(CONFIG), new RelayMetrics(), MemoryBudget.unlimited(), directory, "node", SpecialTopics.NONE,
            booking -> DenyList.Verdict.ALLOWED);
    ActorRef<TopicRegistry.Command> registry =
        kit.spawn(TopicRegistry.create(topics, kit.spawn(Topic.create(ClaimAnnouncement.class, "claims")), System::currentTimeMillis));
    EventLoopGroup inProcess = new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
    try (RelayPort port = new RelayPort(false, registry, topic -> (EventLoop) inProcess.next());
        Socket client = new Socket(port.address.getAddress(), port.address.getPort())) {
      client.setSoTimeout(10_000);
      client.getOutputStream().write(HEAD.getBytes(StandardCharsets.US_ASCII));
      long hour = Instant.now().plusSeconds(3600).getEpochSecond();
      port.codes.expectMessageClass(CodeStore.Redeem.class, Duration.ofSeconds(10))
          .replyTo()
          .tell(new CodeStore.Redeemed(new CodeGrant("lab/camera", List.of("read"), "booking", hour, hour)));
      assertEquals(-1, client.getInputStream().read(), "admitted, the connection ends without an answer when it cannot move");
      Await.until("its topic drops it within 5 s, half the attach timeout", Duration.ofSeconds(5), () -> directory.size() == 0);
    } finally {
      inProcess.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }
  }

  /** A relay port on loopback whose admission asks probes for the node's code store and, unless given, its topics. */
  private final class RelayPort implements AutoCloseable {
    final TestProbe<CodeStore.Command> codes = kit.createTestProbe();
    final AdmissionGate gate = new AdmissionGate(8, () -> {});
    final RelayMetrics metrics = new RelayMetrics();
    final ClientPorts ports;
    final InetSocketAddress address;

    RelayPort(boolean tls) {
      this(tls, kit.<TopicRegistry.Command>createTestProbe().ref(), null);
    }

    RelayPort(boolean tls, ActorRef<TopicRegistry.Command> registry, Function<String, EventLoop> homes) {
      Config config = ConfigFactory.parseMap(Map.of("relay.tls-cert", certificate.cert().toString(), "relay.tls-key", certificate.key().toString())).withFallback(CONFIG);
      HttpSettings settings = HttpSettings.create(config);
      WarningLimiter errors = WarningLimiter.start(kit.system(), LoggerFactory.getLogger(RelayUpgradeTest.class), Duration.ofMinutes(1));
      Admission admission =
          new Admission(
              settings, RelaySettings.create(config), codes.ref(), booking -> DenyList.Verdict.ALLOWED, () -> true,
              registry, metrics, kit.system(), () -> false, errors);
      ports = new ClientPorts(PortSettings.create(config), errors);
      address =
          ports.bind(
              "127.0.0.1", 0, tls ? Optional.of(TlsContext.load(settings)) : Optional.empty(),
              pipeline -> RelayUpgrade.install(pipeline, admission, gate, ports.counters(), errors, homes));
    }

    @Override
    public void close() throws Exception {
      ports.terminate(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * A TLS client whose last handshake message and first records reach the socket in one write, as
   * a client sends its request right behind its handshake: the node's engine, whose handshake
   * finishes in the read, then decrypts each record on its own.
   */
  private static final class HeldClient {
    /** What the server sent, decrypted, once it closed the connection ("reset: ..." if it reset it). */
    final CompletableFuture<String> received = new CompletableFuture<>();
    private final StringBuilder bytes = new StringBuilder();
    private final HoldFlushes holder = new HoldFlushes();
    private Channel channel;

    static HeldClient connect(EventLoopGroup loop, InetSocketAddress server, TestCertificate trusted) throws Exception {
      HeldClient client = new HeldClient();
      SslContext tls = SslContextBuilder.forClient().trustManager(trusted.cert().toFile()).build();
      ChannelFuture connected =
          new Bootstrap()
              .group(loop)
              .channel(NioSocketChannel.class)
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel channel) {
                      channel.pipeline().addLast(client.holder, tls.newHandler(channel.alloc(), "127.0.0.1", server.getPort()), client.reader());
                    }
                  })
              .connect(server);
      assertTrue(connected.await(10, TimeUnit.SECONDS) && connected.isSuccess(), "connected within 10 s: " + connected.cause());
      client.channel = connected.channel();
      Future<Channel> handshake = client.channel.pipeline().get(SslHandler.class).handshakeFuture();
      assertTrue(handshake.await(10, TimeUnit.SECONDS) && handshake.isSuccess(), "the TLS handshake completed within 10 s: " + handshake.cause());
      return client;
    }

    /** Each of {@code messages} flushed as a TLS record of its own; then everything held written to the socket at once. */
    void sendInOneWrite(byte[]... messages) {
      for (byte[] message : messages) {
        channel.writeAndFlush(Unpooled.wrappedBuffer(message));
      }
      channel.eventLoop().execute(holder::release);
    }

    private ChannelInboundHandlerAdapter reader() {
      return new ChannelInboundHandlerAdapter() {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
          ByteBuf buf = (ByteBuf) msg;
          bytes.append(buf.toString(StandardCharsets.ISO_8859_1));
          buf.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
          received.complete("reset: " + cause + " after: " + bytes);
          ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
          received.complete(bytes.toString());
        }
      };
    }
  }

  /** Lets the first flush towards the socket through (the client's hello) and holds every later one until {@link #release}. */
  private static final class HoldFlushes extends ChannelOutboundHandlerAdapter {
    private boolean helloSent;
    private boolean released;
    private ChannelHandlerContext ctx;

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
      if (!helloSent || released) {
        helloSent = true;
        ctx.flush();
      }
    }

    void release() {
      released = true;
      ctx.flush();
    }
  }
}
