package io.relay.http.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.relay.http.log.WarningLimiter;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.StreamSupport;
import org.apache.pekko.Done;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's client ports (the relay and the access API) on Netty: one group of event loops
 * serving every port's connections, on the native epoll transport where the platform has it and
 * NIO otherwise (chosen at start and logged). A connection's TLS and HTTP head are served by the
 * loop it was accepted on; an upgraded WebSocket moves to its topic's loop ({@link #loopFor}).
 *
 * <p>The ports share the node's {@code relay.max-connections}: when they hold it, every port
 * stops accepting (new connections wait in the kernel's backlog), and they resume when a
 * connection of any port closes; a connection accepted in the meantime is closed at once. When
 * {@code accept} itself fails (the process ran out of file descriptors), the port pauses instead
 * of spinning; the failures are counted and their log lines rate-limited. A request head must
 * arrive within {@code relay.header-timeout} ({@link HeadTimeout}). {@link #unbind} stops
 * accepting; {@link #terminate} closes what is still open after a deadline.
 */
public final class ClientPorts {
  private static final Logger LOG = LoggerFactory.getLogger(ClientPorts.class);
  private static final long ACCEPT_PAUSE_MS = 100;
  /**
   * The most a connection's read takes from its socket at once. Netty's default, 64 KiB, is less
   * than a 64 KiB message with its header, so such a message never arrives whole in one read and
   * is copied twice (into an array of its own, then into the frame it is relayed in) instead of
   * once. Reads grow towards this only on connections whose reads fill them (streams); others
   * keep small reads.
   */
  private static final int MAX_READ_BYTES = 256 * 1024;

  private final PortSettings settings;
  private final WarningLimiter warnings;
  private final AtomicInteger connections = new AtomicInteger();
  private final PortCounters counters = new PortCounters();
  private final EventLoopGroup group;
  private final Class<? extends ServerChannel> serverChannel;
  private final ChannelGroup servers = new DefaultChannelGroup("relay-client-ports", GlobalEventExecutor.INSTANCE);
  /** The group's event loops, in a fixed order, for {@link #loopFor}. */
  private final EventLoop[] loops;
  private final ChannelGroup open = new DefaultChannelGroup("relay-client-connections", GlobalEventExecutor.INSTANCE);
  private volatile boolean accepting = true;
  private volatile boolean unbound;

  /**
   * Starts the event loops of the node's client ports.
   *
   * @param warnings where failures to accept are logged
   */
  public ClientPorts(PortSettings settings, WarningLimiter warnings) {
    this.settings = settings;
    this.warnings = warnings;
    boolean epoll = Epoll.isAvailable();
    group = new MultiThreadIoEventLoopGroup(settings.eventLoops(), epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
    serverChannel = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    loops = StreamSupport.stream(group.spliterator(), false).map(EventLoop.class::cast).toArray(EventLoop[]::new);
    LOG.info("client ports on Netty's {} transport, {} event loops, at most {} connections",
        epoll ? "epoll" : "nio", settings.eventLoops(), settings.maxConnections());
  }

  /** The event loop that serves the connections of {@code key} (a topic): always the same one. */
  public EventLoop loopFor(String key) {
    return loops[Math.floorMod(key.hashCode(), loops.length)];
  }

  /** Client connections open now, on every port. */
  public int connections() {
    return connections.get();
  }

  /** The event loops of every port's connections. */
  public List<EventLoop> loops() {
    return List.of(loops);
  }

  public PortCounters counters() {
    return counters;
  }

  /**
   * Binds {@code host:port}; each connection gets TLS first when {@code tls} is given, then the
   * {@link HeadTimeout}, then what {@code http} adds to its pipeline.
   *
   * @return the bound address
   * @throws IllegalStateException when the port cannot be bound
   */
  public InetSocketAddress bind(String host, int port, Optional<SslContext> tls, Consumer<ChannelPipeline> http) {
    int writeBuffer = settings.writeBuffer();
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(group)
            .channel(serverChannel)
            .option(ChannelOption.SO_BACKLOG, settings.backlog())
            .option(ChannelOption.SO_REUSEADDR, true)
            .handler(new AcceptFailures())
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.RCVBUF_ALLOCATOR, new AdaptiveRecvByteBufAllocator(64, 2048, MAX_READ_BYTES))
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(writeBuffer / 2, writeBuffer))
            .childHandler(
                new ChannelInitializer<>() {
                  @Override
                  protected void initChannel(Channel channel) {
                    if (!admit(channel)) {
                      return;
                    }
                    ChannelPipeline pipeline = channel.pipeline();
                    if (tls.isPresent()) { // the header timeout is the handshake's: Netty's own (10 s) would end it unreset and uncounted
                      SslHandler handshake = tls.get().newHandler(channel.alloc());
                      handshake.setHandshakeTimeoutMillis(0);
                      pipeline.addLast("tls", handshake);
                    }
                    pipeline.addLast(HeadTimeout.NAME, new HeadTimeout(settings.headerTimeout().toNanos(), counters));
                    http.accept(pipeline);
                    if (unbound) { // accepted before the ports closed, set up after unbind told the open ones
                      pipeline.fireUserEventTriggered(UNBOUND);
                    }
                  }
                });
    Channel server;
    try {
      server = bootstrap.bind(host, port).syncUninterruptibly().channel();
    } catch (RuntimeException e) {
      throw new IllegalStateException("cannot bind " + host + ":" + port + ": " + e.getMessage(), e);
    }
    servers.add(server);
    if (!accepting) {
      server.config().setAutoRead(false);
    }
    return (InetSocketAddress) server.localAddress();
  }

  /** Counts a new connection, or closes it at the limit and stops accepting. */
  private boolean admit(Channel channel) {
    int max = settings.maxConnections();
    if (connections.getAndUpdate(n -> n < max ? n + 1 : n) >= max) {
      counters.limitReached.increment();
      pauseAccepting();
      channel.close();
      return false;
    }
    open.add(channel);
    channel.closeFuture().addListener(closed -> {
      connections.decrementAndGet();
      resumeAccepting();
    });
    if (full()) {
      counters.limitReached.increment();
      pauseAccepting();
    }
    return true;
  }

  private boolean full() {
    return connections.get() >= settings.maxConnections();
  }

  // pause and resume run on different event loops: one at a time, or a resume could run between a
  // pause's flag and its autoRead and leave the ports paused with room
  private synchronized void pauseAccepting() {
    accepting = false;
    servers.forEach(server -> server.config().setAutoRead(false));
    if (!full()) {
      // a connection closed meanwhile, and its resume may have run before this pause
      resumeAccepting();
    }
  }

  private synchronized void resumeAccepting() {
    if (!accepting && !full()) {
      accepting = true;
      servers.forEach(server -> server.config().setAutoRead(true));
    }
  }

  /**
   * What a port does while {@code accept} fails, most likely for want of file descriptors: the
   * connection stays in the backlog, so watching for it again at once would spin. The port pauses
   * for {@value #ACCEPT_PAUSE_MS} ms, counts the failure, and logs it (rate-limited). Runs on the
   * port's event loop.
   */
  private final class AcceptFailures extends ChannelInboundHandlerAdapter {
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      counters.acceptFailures.increment();
      warnings.warn(
          "accepting connections on port {} failed ({}); pausing {} ms between attempts. "
              + "'Too many open files' means the process's descriptor limit (ulimit -n) is too low for relay.max-connections ({})",
          ((InetSocketAddress) ctx.channel().localAddress()).getPort(),
          cause.getMessage(),
          ACCEPT_PAUSE_MS,
          settings.maxConnections());
      ctx.channel().config().setAutoRead(false);
      ctx.executor().schedule(() -> retry(ctx.channel()), ACCEPT_PAUSE_MS, TimeUnit.MILLISECONDS);
    }
  }

  /** Accepts again after a failed accept's pause, unless the ports have reached their connection limit meanwhile. */
  private synchronized void retry(Channel server) {
    if (accepting) {
      server.config().setAutoRead(true);
    }
  }

  /** Fired on every open connection once the ports stop accepting ({@link #unbind}). */
  public static final Object UNBOUND = new Object();

  /** Stops accepting on every port and tells every open connection ({@link #UNBOUND}): kept access connections close. */
  public CompletionStage<Done> unbind() {
    unbound = true;
    CompletableFuture<Done> closed = new CompletableFuture<>();
    servers.close().addListener(done -> closed.complete(Done.getInstance()));
    open.forEach(channel -> channel.pipeline().fireUserEventTriggered(UNBOUND));
    return closed;
  }

  /**
   * Waits up to {@code deadline} for the open connections to close, then closes the rest and
   * stops the event loops.
   */
  public CompletionStage<Done> terminate(Duration deadline) {
    return CompletableFuture.supplyAsync(
        () -> {
          if (!open.newCloseFuture().awaitUninterruptibly(deadline.toMillis())) {
            open.close().awaitUninterruptibly(1, TimeUnit.SECONDS);
          }
          group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
          return Done.getInstance();
        });
  }
}
