package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalIoHandler;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.relay.RelaySettings;
import io.relay.deny.DenyList;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.Await;
import io.relay.ws.ClientFrames;
import io.relay.ws.WsFrames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.util.ByteString;

/**
 * Connections for the topic actors' tests: what the relay route would hand a topic, and the
 * client side of a joined connection's stream (the bytes a client sends, the frames it gets).
 */
final class TestConnections {
  private static final AtomicLong IDS = new AtomicLong();
  /** The event loops of the tests' in-process channels (daemon threads, for the JVM's life). */
  private static final EventLoopGroup LOOPS = new MultiThreadIoEventLoopGroup(2, new DefaultThreadFactory("topic-test", true), LocalIoHandler.newFactory());
  static final Duration WAIT = Duration.ofSeconds(5);

  private final ActorTestKit kit;
  final RelayMetrics metrics = new RelayMetrics();
  final ConnectionDirectory directory = new ConnectionDirectory();
  /** Bookings the topics' deny verdicts call denied. */
  final Set<String> denied = ConcurrentHashMap.newKeySet();
  /** Bookings whose deny verdict throws: a fault in the code a topic actor runs on a join. */
  final Set<String> faultyBookings = ConcurrentHashMap.newKeySet();
  /** Topics whose room throws when its readers change: a fault that makes the topic actor fail. */
  final Set<String> faultyRooms = ConcurrentHashMap.newKeySet();
  final TopicActor.Context context;

  TestConnections(ActorTestKit kit, String node) {
    this.kit = kit;
    this.context =
        new TopicActor.Context(
            RelaySettings.create(kit.system().settings().config()), metrics, MemoryBudget.unlimited(), directory, node,
            (topic, actor) -> new Room(metrics, MemoryBudget.unlimited()) {
              @Override
              public void setReaders(Connection[] readers) {
                if (faultyRooms.contains(topic)) {
                  throw new IllegalStateException("a fault in the room of topic " + topic + ", made by the test");
                }
                super.setReaders(readers);
              }
            },
            booking -> {
              if (faultyBookings.contains(booking)) {
                throw new IllegalStateException("a fault in the deny verdict of booking " + booking + ", made by the test");
              }
              return denied.contains(booking) ? DenyList.Verdict.DENIED : DenyList.Verdict.ALLOWED;
            });
  }

  /**
   * A connection of {@code topic} for {@code booking} with {@code scopes}, expiring at {@code
   * expiresAt}, whose queue counts what a close lets go in {@code discarded}.
   */
  static Connection connection(CounterDataPoint discarded, String topic, String booking, Instant expiresAt, String... scopes) {
    Connection.Grant grant =
        new Connection.Grant(topic, booking, List.of(scopes), Instant.now(), expiresAt, "127.0.0.1", "test");
    return new Connection(IDS.incrementAndGet(), grant, new OutboundQueue(64, 1 << 20, discarded));
  }

  static Connection connection(String topic, String booking, Instant expiresAt, String... scopes) {
    return connection(Counter.builder().name("discarded").build(), topic, booking, expiresAt, scopes);
  }

  static Connection connection(String topic, String booking, String... scopes) {
    return connection(topic, booking, Instant.now().plusSeconds(3600), scopes);
  }

  /**
   * Serves a joined connection on an in-process channel, as the relay port would once the 101 is
   * written, and connects the client's side to it.
   */
  static Client run(TopicActor.JoinResult result) {
    assertTrue(result instanceof TopicActor.Joined, "joined: " + result);
    LocalAddress address = new LocalAddress("topic-test-" + IDS.incrementAndGet());
    CompletableFuture<Channel> served = new CompletableFuture<>();
    Channel server =
        new ServerBootstrap()
            .group(LOOPS)
            .channel(LocalServerChannel.class)
            .handler(
                new ChannelInboundHandlerAdapter() {
                  @Override
                  public void channelRead(ChannelHandlerContext ctx, Object accepted) {
                    served.complete((Channel) accepted);
                    ctx.fireChannelRead(accepted);
                  }
                })
            .childHandler(((TopicActor.Joined) result).handler())
            .bind(address)
            .syncUninterruptibly()
            .channel();
    BlockingQueue<ByteString> received = new LinkedBlockingQueue<>();
    AtomicLong lastArrival = new AtomicLong();
    Channel client =
        new Bootstrap()
            .group(LOOPS)
            .channel(LocalChannel.class)
            .handler(
                new ChannelInboundHandlerAdapter() {
                  @Override
                  public void channelRead(ChannelHandlerContext ctx, Object msg) {
                    ByteBuf bytes = (ByteBuf) msg;
                    lastArrival.set(System.nanoTime());
                    received.add(ByteString.fromArray(ByteBufUtil.getBytes(bytes)));
                    bytes.release();
                  }
                })
            .connect(address)
            .syncUninterruptibly()
            .channel();
    server.close().syncUninterruptibly();
    return new Client(client, Await.value("the local server accepts the connection", WAIT, served), received, lastArrival);
  }

  /** The client's side of one connection. */
  static final class Client {
    private final Channel in;
    /** The server's side of the connection, whose pipeline holds the connection's handler. */
    final Channel served;
    private final BlockingQueue<ByteString> received;
    private final AtomicLong lastArrival;
    private ByteString pending = ByteString.emptyByteString();

    Client(Channel in, Channel served, BlockingQueue<ByteString> received, AtomicLong lastArrival) {
      this.in = in;
      this.served = served;
      this.received = received;
      this.lastArrival = lastArrival;
    }

    /** When the server's last bytes arrived ({@link System#nanoTime}), 0 before any did. */
    long lastArrivalNanos() {
      return lastArrival.get();
    }

    void sendText(String text) {
      in.writeAndFlush(Unpooled.wrappedBuffer(new ClientFrames().text(text).bytes()));
    }

    /** Sends bytes as they are, a client's frames. */
    void send(byte[] wire) {
      in.writeAndFlush(Unpooled.wrappedBuffer(wire));
    }

    /** The client goes away without a closing handshake: its channel closes. */
    void vanish() {
      in.close();
    }

    /** The next frame the server sent: its opcode and payload. */
    Frame next() throws InterruptedException {
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (true) {
        Frame frame = Frame.parse(pending);
        if (frame != null) {
          pending = pending.drop(frame.length());
          return frame;
        }
        ByteString more = received.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        assertNotNull(more, "no frame from the server within " + WAIT);
        pending = pending.concat(more);
      }
    }

    String nextText() throws InterruptedException {
      Frame frame = next();
      assertEquals(WsFrames.TEXT, frame.opcode(), "a text frame");
      return frame.text();
    }

    /** The close code of the next frame, which must be a close. */
    int nextCloseCode() throws InterruptedException {
      Frame frame = next();
      assertEquals(WsFrames.CLOSE, frame.opcode(), "a close frame, not " + frame.opcode());
      return ((frame.payload()[0] & 0xff) << 8) | (frame.payload()[1] & 0xff);
    }

    /** Whether nothing arrives for {@code quiet}. */
    boolean silentFor(Duration quiet) throws InterruptedException {
      if (Frame.parse(pending) != null) {
        return false;
      }
      ByteString more = received.poll(quiet.toNanos(), TimeUnit.NANOSECONDS);
      if (more != null) {
        pending = pending.concat(more);
        return false;
      }
      return true;
    }
  }

  /** A server frame (unmasked, RFC 6455 section 5.2). */
  record Frame(byte opcode, byte[] payload, int length) {
    static Frame parse(ByteString bytes) {
      if (bytes.length() < 2) {
        return null;
      }
      int len = bytes.apply(1) & 0x7f;
      int header = 2;
      if (len == 126) {
        if (bytes.length() < 4) {
          return null;
        }
        len = ((bytes.apply(2) & 0xff) << 8) | (bytes.apply(3) & 0xff);
        header = 4;
      } else if (len == 127) {
        if (bytes.length() < 10) {
          return null;
        }
        long l = 0;
        for (int i = 2; i < 10; i++) {
          l = (l << 8) | (bytes.apply(i) & 0xff);
        }
        len = (int) l;
        header = 10;
      }
      if (bytes.length() < header + len) {
        return null;
      }
      return new Frame((byte) (bytes.apply(0) & 0x0f), bytes.slice(header, header + len).toArray(), header + len);
    }

    String text() {
      return new String(payload, StandardCharsets.UTF_8);
    }
  }
}
