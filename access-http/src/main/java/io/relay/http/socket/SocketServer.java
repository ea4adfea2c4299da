package io.relay.http.socket;

import io.relay.http.log.ServerLog;
import io.relay.http.log.WarningLimiter;
import io.relay.ws.SocketOutput;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.net.ssl.SSLContext;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.concurrent.duration.FiniteDuration;

/**
 * An HTTP server on the node's own sockets, plain or TLS ({@link SocketEndpoint}): the node reads each connection's request heads
 * itself and answers the requests it serves without any stream ({@link OwnRequests}: the relay's
 * upgrades, the access API's code requests), switching an upgraded connection to its protocol's
 * stream; every other request is served by a Pekko HTTP route, with Pekko HTTP's server layer
 * (request parsing, response rendering, keep-alive) over a {@link SocketStage} per connection
 * instead of Pekko's TCP actors ({@link #bind}).
 *
 * <p>Why: with Pekko's TCP, every read and write of a connection passes through a connection
 * actor and back (data, then an ack or "resume reading"), several hand-overs per relayed frame on
 * a machine with one dispatcher thread per core. Here a connection's stream reads and writes its
 * socket itself; its selector thread reports the socket when it turned readable or writable, reads
 * a plain WebSocket's bytes for its stream while the stream waits for them, and runs the streams
 * it wakes itself ({@link SelectorRuns}). A port has {@code relay.socket-selectors} selector
 * threads ({@link PortSelector}, one per core by default): the first accepts and hands each new
 * connection to the next in turn, which serves it for its whole life, so a port's sockets and the
 * streams their selectors wake are spread over the cores. And a
 * code request or a WebSocket admitted costs no HTTP stream at all: no parser, renderer and
 * server graph materialised, started and torn down per connection.
 *
 * <p>Accepting stops while the node holds {@code relay.max-connections} (all its client ports
 * together, {@link ConnectionSlots}), and resumes when one closes. When {@code accept} itself
 * fails (the process ran out of file descriptors), the port pauses instead of spinning on a
 * connection it cannot take ({@link AcceptBackoff}). {@code idle-timeout} and
 * {@code relay.header-timeout} are one {@link ConnectionSweep} over the port's connections. While
 * the socket of a slow peer is full, a connection gathers up to {@code
 * pekko.stream.materializer.io.tcp.write-buffer-size} before it stops pulling, as Pekko's TCP
 * stage does. {@link #unbind} stops accepting; {@link #terminate} also closes what is still open
 * after a deadline.
 *
 * <p>Why one class of over 400 lines: accepting under the connection limit, handing connections
 * to the selectors, counting them until they close and switching a connection from its request
 * reader to its stream all change the port's state; split further, each piece would need its
 * invariants restated. The parts that stand alone are their own classes ({@link PortSelector},
 * {@link ConnectionSweep}, {@link AcceptBackoff}, {@link ConnectionSlots}, {@link
 * RequestConnection}, {@link SocketStage}).
 */
public final class SocketServer {
  private static final Logger LOG = LoggerFactory.getLogger(SocketServer.class);

  private final ActorSystem<?> system;
  private final Materializer materializer;
  private final ServerSettings settings;
  /** Warnings that clients can cause: one of a kind per interval. */
  private final WarningLimiter warnings;
  /** How the port serves a new connection: Pekko HTTP's layer, or the node's own handshake. */
  private final Consumer<SocketEndpoint> serve;
  /** The context of a TLS port, or null for plain TCP. */
  private final SSLContext tls;
  /** Where TLS handshakes' expensive steps run: the connections' dispatcher. */
  private final Executor tlsTasks;
  private final int writeBufferBytes;
  /** The port's selector threads; the first also accepts. */
  private final PortSelector[] selectors;
  private final ServerSocketChannel server;
  private final SelectionKey acceptKey;
  private final InetSocketAddress localAddress;
  private final Set<SocketEndpoint> endpoints = ConcurrentHashMap.newKeySet();
  /** Connections accepted and not closed yet, including those being handed to their selector. */
  private final AtomicInteger open = new AtomicInteger();
  /** Completes once the port is unbound and its last connection has closed. */
  private final CompletableFuture<Done> allClosed = new CompletableFuture<>();
  private final Limits limits;
  private volatile boolean accepting = true;
  /** The port stopped accepting at the node's connection limit, until a slot frees. */
  private volatile boolean waitingForSlot;
  // on the accepting selector's thread only: accept failures, and the selector the next
  // connection goes to
  private final AcceptBackoff backoff;
  private int nextSelector;


  /** What the node's client ports share: their settings, connection slots and counters. */
  public record Limits(SocketSettings settings, ConnectionSlots slots, SocketCounters counters) {
    public static Limits create(SocketSettings settings) {
      return new Limits(settings, new ConnectionSlots(settings.maxConnections()), new SocketCounters());
    }
  }

  private SocketServer(
      ActorSystem<?> system,
      InetSocketAddress address,
      Function<SocketServer, Consumer<SocketEndpoint>> serving,
      SSLContext tls,
      Limits limits,
      Duration logLimitInterval)
      throws IOException {
    this.system = system;
    this.tls = tls;
    this.tlsTasks = system.dispatchers().lookup(DispatcherSelector.fromConfig(ClientStreams.DISPATCHER));
    this.warnings = WarningLimiter.start(system, LOG, logLimitInterval);
    this.limits = limits;
    this.materializer = ClientStreams.materializer(system);
    this.settings = ServerSettings.create(system.classicSystem());
    this.writeBufferBytes =
        (int) system.settings().config().getBytes("pekko.stream.materializer.io.tcp.write-buffer-size").longValue();
    this.serve = serving.apply(this);
    this.server = ServerSocketChannel.open();
    this.selectors = new PortSelector[limits.settings().selectors()];
    try {
      server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
      server.bind(address, settings.getBacklog());
      server.configureBlocking(false);
      localAddress = (InetSocketAddress) server.getLocalAddress();
      for (int i = 0; i < selectors.length; i++) {
        String name = "relay-socket-selector-" + localAddress.getPort() + "-" + i;
        selectors[i] =
            new PortSelector(
                name,
                this::onSelected,
                i == 0 ? this::acceptPauseMillis : () -> 0,
                limits.settings().selectorSpin().toNanos(),
                limits.counters().selectorSpin,
                this::stopped);
      }
      acceptKey = server.register(selectors[0].selector(), SelectionKey.OP_ACCEPT);
    } catch (IOException e) {
      server.close();
      for (PortSelector selector : selectors) {
        if (selector != null) {
          selector.selector().close();
        }
      }
      throw e;
    }
    this.backoff = new AcceptBackoff(localAddress.getPort(), limits.slots().limit(), limits.counters());
    limits.slots().onFree(this::onSlotFree);
  }

  /**
   * Binds {@code host:port} for {@code route}, Pekko HTTP's server layer serving every connection,
   * and starts accepting, within the node's shared {@code limits}.
   *
   * @param logLimitInterval warnings about connections and requests (Pekko HTTP's among them) are
   *     logged once of a kind per this interval and counted otherwise
   */
  public static SocketServer bind(
      ActorSystem<?> system, String host, int port, Route route, Limits limits, Duration logLimitInterval) {
    return bind(system, host, port, route, null, null, limits, logLimitInterval);
  }

  /**
   * Binds {@code host:port}: each connection's requests are read by the node and those that
   * {@code own} takes are answered by it ({@link RequestConnection}), with no HTTP stream; {@code
   * route}, under Pekko HTTP's server layer, serves the rest of a connection from the first request
   * {@code own} does not take (if {@code own} {@link OwnRequests#handsOver hands over}; null: every
   * connection). With {@code tls} (null: plain TCP) every connection is TLS first ({@link
   * SocketEndpoint}).
   */
  public static SocketServer bind(
      ActorSystem<?> system,
      String host,
      int port,
      Route route,
      OwnRequests own,
      SSLContext tls,
      Limits limits,
      Duration logLimitInterval) {
    return start(
        system,
        new InetSocketAddress(host, port),
        server -> {
          HttpConnections http =
              own == null || own.handsOver() ? new HttpConnections(server, route, ServerLog.start(system, logLimitInterval)) : null;
          return own == null
              ? endpoint -> http.serve(endpoint, ByteString.emptyByteString())
              : endpoint -> new RequestConnection(endpoint, own, http, server.warnings, limits.counters()).start();
        },
        tls,
        limits,
        logLimitInterval);
  }

  private static SocketServer start(
      ActorSystem<?> system,
      InetSocketAddress address,
      Function<SocketServer, Consumer<SocketEndpoint>> serving,
      SSLContext tls,
      Limits limits,
      Duration logLimitInterval) {
    try {
      SocketServer server = new SocketServer(system, address, serving, tls, limits, logLimitInterval);
      for (PortSelector selector : server.selectors) {
        selector.start();
      }
      ConnectionSweep.start(
          system, server.endpoints, limits.settings().headerTimeout(), idleTimeout(server.settings), limits.counters());
      system.getWhenTerminated().thenRun(server::stop);
      return server;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The address the port was bound to (also after {@link #unbind}). */
  public InetSocketAddress localAddress() {
    return localAddress;
  }

  /** Connections open now. */
  public int openConnections() {
    return open.get();
  }

  /** Stops accepting connections; open ones go on. */
  public CompletionStage<Done> unbind() {
    CompletableFuture<Done> done = new CompletableFuture<>();
    boolean submitted =
        selectors[0].submit(
            () -> {
              accepting = false;
              acceptKey.cancel();
              try {
                server.close();
                // a registered channel is only really closed once the selector has deregistered
                // its key: do that now, so that the port refuses connections when unbind completes
                selectors[0].selectNow();
              } catch (IOException e) {
                LOG.warn("closing the listening socket failed", e);
              }
              if (open.get() == 0) {
                allClosed.complete(Done.getInstance());
              }
              done.complete(Done.getInstance());
            });
    if (!submitted) {
      // the selectors stopped with the actor system: nothing is served any more
      accepting = false;
      allClosed.complete(Done.getInstance());
      done.complete(Done.getInstance());
    }
    return done;
  }

  /**
   * Stops accepting, waits until every connection has closed or {@code deadline} has passed, and
   * then closes what is still open.
   */
  public CompletionStage<Done> terminate(Duration deadline) {
    return unbind()
        .thenCompose(
            unbound -> allClosed.copy().completeOnTimeout(Done.getInstance(), deadline.toNanos(), TimeUnit.NANOSECONDS))
        .thenApply(
            done -> {
              endpoints.forEach(SocketEndpoint::reset);
              return done;
            });
  }

  private void stop() {
    for (PortSelector selector : selectors) {
      selector.stop();
    }
  }

  /**
   * How long the accepting selector may wait for its sockets: until the pause after a failed
   * accept ends, when there is one; accepting resumes when it has ended.
   */
  private long acceptPauseMillis() {
    while (backoff.paused()) {
      long paused = backoff.remaining(System.nanoTime());
      if (paused > 0) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(paused));
      }
      backoff.resume();
      resumeAccepting(); // which may fail, and pause, again
    }
    return 0;
  }

  /**
   * A selector thread stopped, with the actor system or because it failed: the port stops
   * serving, every selector resetting the connections it serves.
   */
  private void stopped() {
    stop();
    try {
      server.close();
    } catch (IOException e) {
      LOG.warn("closing the listening socket failed", e);
    }
  }

  private void onSelected(SelectionKey key) {
    if (key == acceptKey) {
      accept();
      return;
    }
    SocketEndpoint endpoint = (SocketEndpoint) key.attachment();
    try {
      endpoint.selected(key.readyOps());
    } catch (CancelledKeyException e) {
      // its stage closed the socket meanwhile, on another thread
    } catch (RuntimeException e) {
      // a bug in one connection's reader must not stop the selector, which serves its share of the port
      warnings.error("a connection failed unexpectedly and was closed", e);
      endpoint.reset();
    }
  }

  private void accept() {
    while (accepting) {
      if (!limits.slots().tryAcquire()) {
        // at max-connections: stop watching for new ones until a connection closes
        waitingForSlot = true;
        limits.counters().limitReached.increment();
        acceptKey.interestOps(0);
        if (limits.slots().used() < limits.slots().limit()) {
          // one closed meanwhile, before this port said it waits
          selectors[0].submit(this::resumeAccepting);
        }
        return;
      }
      SocketChannel channel;
      try {
        channel = server.accept();
      } catch (IOException e) {
        limits.slots().giveBack();
        backoff.failed(e);
        acceptKey.interestOps(0);
        return;
      }
      if (channel == null) {
        limits.slots().giveBack();
        return;
      }
      backoff.accepted();
      open.incrementAndGet();
      PortSelector selector = selectors[nextSelector];
      nextSelector = (nextSelector + 1) % selectors.length;
      if (selector == selectors[0]) {
        serve(channel, selector);
      } else if (!selector.submit(() -> serve(channel, selector))) {
        SocketEndpoint.closeQuietly(channel);
        released();
      }
    }
  }

  /** On {@code selector}'s thread: serves a connection just accepted, for its whole life. */
  private void serve(SocketChannel channel, PortSelector selector) {
    try {
      channel.configureBlocking(false);
      channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
      SocketEndpoint endpoint =
          new SocketEndpoint(this, selector, channel, channel.register(selector.selector(), 0), tls, tlsTasks);
      endpoints.add(endpoint);
      serve.accept(endpoint);
    } catch (IOException | ClosedSelectorException e) {
      LOG.debug("dropping a connection that failed at once: {}", e.toString());
      SocketEndpoint.closeQuietly(channel);
      released();
    }
  }

  /** Watches for connections again, unless unbound or pausing after a failure. */
  private void resumeAccepting() {
    if (accepting && !backoff.paused() && acceptKey.isValid() && acceptKey.interestOps() == 0) {
      waitingForSlot = false;
      acceptKey.interestOps(SelectionKey.OP_ACCEPT);
      accept();
    }
  }

  /** A connection of one of the node's ports closed. */
  private void onSlotFree() {
    if (waitingForSlot) {
      selectors[0].submit(this::resumeAccepting);
    }
  }

  /** {@code pekko.http.server.idle-timeout}, or zero for none. */
  private static Duration idleTimeout(ServerSettings settings) {
    scala.concurrent.duration.Duration timeout = settings.getTimeouts().idleTimeout();
    return timeout.isFinite() ? Duration.ofNanos(((FiniteDuration) timeout).toNanos()) : Duration.ZERO;
  }

  /**
   * Serves {@code endpoint}'s socket with {@code flow} (the protocol its upgrade switched to) over a new
   * stage that first writes {@code unwritten} and hands {@code unread} on before what it reads.
   */
  void switchProtocol(
      SocketEndpoint endpoint, Graph<FlowShape<ByteString, ByteString>, ?> flow, ByteString unwritten, ByteString unread) {
    try {
      boolean direct = !endpoint.isTls() && flow instanceof SocketOutput.User;
      Runnable written = null;
      if (flow instanceof SocketOutput.User user) {
        user.useSocket(direct ? SocketStage.output(endpoint) : null, endpoint);
        written = user::written;
      }
      ClientStreams.run(Flow.fromGraph(SocketStage.bytes(endpoint, writeBufferBytes, unwritten, unread, direct, written)).join(flow), materializer);
    } catch (RuntimeException e) {
      warnings.warn("could not switch a connection to its new protocol", e);
      endpoint.reset();
    }
  }

  ActorSystem<?> system() {
    return system;
  }

  Materializer materializer() {
    return materializer;
  }

  ServerSettings settings() {
    return settings;
  }

  int writeBufferBytes() {
    return writeBufferBytes;
  }

  WarningLimiter warnings() {
    return warnings;
  }

  /** {@code endpoint}'s socket was closed. */
  void closed(SocketEndpoint endpoint) {
    if (endpoints.remove(endpoint)) {
      released();
    }
  }

  /** A connection accepted by the port is closed: its slot is free. */
  private void released() {
    int left = open.decrementAndGet();
    limits.slots().release();
    if (!accepting && left == 0) {
      allClosed.complete(Done.getInstance());
    }
  }

  /** How many of the port's open connections each of its selectors serves. */
  int[] connectionsPerSelector() {
    int[] counts = new int[selectors.length];
    for (SocketEndpoint endpoint : endpoints) {
      for (int i = 0; i < selectors.length; i++) {
        if (endpoint.selector() == selectors[i]) {
          counts[i]++;
        }
      }
    }
    return counts;
  }
}
