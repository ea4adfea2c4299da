package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A plain connection switched to a protocol (here an echo that waits for a gate), driven by plain
 * sockets: the selector reads for the protocol's stage while it waits for bytes, and the stage reads
 * the socket itself while the client keeps it full. Pieces sent one at a time are each handed on as
 * they arrive; a long stream arrives whole and in order; while the protocol takes nothing, nothing is
 * read (the client's writes stop being taken) and nothing is lost once it takes again; a client that
 * closes its side gets everything echoed and then the end of the connection; a protocol that
 * sizes its reads gets none larger than it asked for.
 */
class SwitchedProtocolTest {
  private static final Duration DEADLINE = TestSockets.DEADLINE;
  private static final byte[] RESPONSE =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  /** More than the kernel's buffers on both sides of a loopback connection hold. */
  private static final int FLOOD_LIMIT = 64 * 1024 * 1024;

  private ActorSystem<Void> system;
  private SocketServer server;
  /** The echo passes bytes on once this completes. */
  private final CompletableFuture<Void> gate = new CompletableFuture<>();
  /** An echo that asks for reads of at most {@value #SIZED_READ} bytes. */
  private final SizedEcho sized = new SizedEcho(SIZED_READ);
  private static final int SIZED_READ = 1000;

  @BeforeEach
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "switched-protocol-test", ConfigFactory.load());
    OwnRequests own =
        new OwnRequests() {
          @Override
          public boolean takes(RequestHead head) {
            return head.path().equals("/echo") || head.path().equals("/sized") || head.path().equals("/thread");
          }

          @Override
          public boolean handsOver() {
            return false;
          }

          @Override
          public CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer) {
            if (head.path().equals("/sized")) {
              return CompletableFuture.completedFuture(Answer.switching(RESPONSE, sized));
            }
            if (head.path().equals("/thread")) {
              Flow<ByteString, ByteString, ?> where =
                  Flow.of(ByteString.class).map(bytes -> ByteString.fromString(Thread.currentThread().getName() + "\n"));
              return CompletableFuture.completedFuture(Answer.switching(RESPONSE, where));
            }
            Flow<ByteString, ByteString, ?> echo = Flow.of(ByteString.class).mapAsync(1, bytes -> gate.thenApply(open -> bytes));
            return CompletableFuture.completedFuture(Answer.switching(RESPONSE, echo));
          }
        };
    server = TestSockets.bind(system, system.settings().config(), Directives.reject(), own, null);
  }

  @AfterEach
  void stop() throws Exception {
    TestSockets.terminate(system);
  }

  @Test
  void theProtocolRunsOnTheConnectionsThreadsNotOnTheDefaultDispatcher() throws IOException {
    try (Socket socket = switched("/thread")) {
      socket.getOutputStream().write('x');
      String thread = new java.io.BufferedReader(new java.io.InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
      assertTrue(
          thread.contains(ClientStreams.DISPATCHER) || thread.startsWith("relay-socket-selector-"),
          "the connection's stream ran on " + thread + ", not on the connections' dispatcher or a selector");
    }
  }

  @Test
  void piecesSentOneAtATimeAreEachHandedOnAsTheyArrive() throws IOException {
    gate.complete(null);
    try (Socket socket = switched()) {
      for (int i = 0; i < 50; i++) {
        byte[] piece = ("piece " + i).getBytes(StandardCharsets.US_ASCII);
        socket.getOutputStream().write(piece);
        assertArrayEquals(piece, socket.getInputStream().readNBytes(piece.length), "the echo of piece " + i);
      }
    }
  }

  @Test
  void aStreamThatKeepsTheSocketFullArrivesWholeAndInOrder() throws Exception {
    gate.complete(null);
    byte[] stream = pattern(16 * 1024 * 1024);
    ExecutorService writer = Executors.newSingleThreadExecutor();
    try (Socket socket = switched()) {
      Future<?> written =
          writer.submit(
              () -> {
                OutputStream out = socket.getOutputStream();
                for (int at = 0; at < stream.length; at += 50_000) {
                  out.write(stream, at, Math.min(50_000, stream.length - at));
                }
                return null;
              });
      assertArrayEquals(stream, socket.getInputStream().readNBytes(stream.length), "the echo of the whole stream");
      written.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    } finally {
      writer.shutdownNow();
    }
  }

  @Test
  void whileTheProtocolTakesNothingTheSocketIsNotReadAndNothingIsLost() throws Exception {
    byte[] flood = pattern(FLOOD_LIMIT);
    try (Socket socket = switched()) {
      SocketChannel channel = socket.getChannel();
      channel.configureBlocking(false);
      int sent = writeUntilNotTaken(channel, flood);
      assertTrue(sent < FLOOD_LIMIT, "the server read all " + sent + " bytes while its protocol took nothing");
      gate.complete(null);
      channel.configureBlocking(true);
      byte[] echoed = socket.getInputStream().readNBytes(sent);
      assertArrayEquals(Arrays.copyOf(flood, sent), echoed, "the echo of what the client sent, once the protocol took again");
    }
  }

  @Test
  void aClientThatClosesItsSideGetsEverythingEchoedAndThenTheEnd() throws IOException {
    gate.complete(null);
    try (Socket socket = switched()) {
      socket.getOutputStream().write("last words".getBytes(StandardCharsets.US_ASCII));
      socket.shutdownOutput();
      assertEquals("last words", new String(socket.getInputStream().readAllBytes(), StandardCharsets.US_ASCII));
    }
  }

  @Test
  void aProtocolThatSizesItsReadsGetsNoReadLargerThanItAskedForAndHearsWhenEachEchoIsWritten() throws IOException {
    byte[] stream = pattern(100 * SIZED_READ);
    try (Socket socket = switched("/sized")) {
      socket.getOutputStream().write(stream);
      assertArrayEquals(stream, socket.getInputStream().readNBytes(stream.length), "the echo of the whole stream");
    }
    assertTrue(sized.largestRead.get() <= SIZED_READ, "a read of " + sized.largestRead.get() + " bytes");
    sized.assertEverythingReportedWritten();
  }

  /** A client socket whose connection was switched to the echo, its response read. */
  private Socket switched() throws IOException {
    return switched("/echo");
  }

  private Socket switched(String path) throws IOException {
    SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", server.localAddress().getPort()));
    Socket socket = channel.socket();
    socket.setSoTimeout((int) DEADLINE.toMillis());
    TestSockets.send(socket, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
    assertArrayEquals(RESPONSE, socket.getInputStream().readNBytes(RESPONSE.length), "the switching response");
    return socket;
  }

  /**
   * Writes {@code bytes} until the socket stays full for half a second (both sides' buffers are
   * full and the server reads nothing), within the test's deadline; how many bytes it took.
   */
  private static int writeUntilNotTaken(SocketChannel channel, byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    try (Selector selector = Selector.open()) {
      channel.register(selector, SelectionKey.OP_WRITE);
      while (buffer.hasRemaining() && System.nanoTime() < deadline) {
        channel.write(buffer);
        selector.selectedKeys().clear();
        if (buffer.hasRemaining() && selector.select(500) == 0) {
          break;
        }
      }
    }
    return buffer.position();
  }

  static byte[] pattern(int size) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i % 251);
    }
    return bytes;
  }
}
