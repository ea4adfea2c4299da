package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.http.HttpSettings;
import io.relay.http.TlsContext;
import io.relay.testing.Await;
import io.relay.testing.TestCertificate;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The socket transport serving TLS (the node's HTTPS and WSS ports): a reader slower than the
 * server and a large upload cross the TLS layer whole and in order; a client that never starts
 * its handshake is cut off at the header timeout, and one that speaks plain HTTP to the port is
 * closed; neither stops the port serving. A protocol that sizes its reads gets reads of several
 * TLS records, none larger than it asked for.
 */
class TlsSocketServerTest {
  private static final Duration DEADLINE = TestSockets.DEADLINE;
  private static final byte[] BIG = new byte[8 * 1024 * 1024];
  private static final String HELLO = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
  private static final byte[] SWITCHED =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  /** The most plain text one TLS record carries. */
  private static final int TLS_RECORD = 16 * 1024;
  /** What the sized echo asks its reads to take at most: more than two records. */
  private static final int SIZED_READ = 40_000;

  @TempDir static Path dir;
  private static TestCertificate certificate;
  private static SSLContext client;
  private ActorSystem<Void> system;
  private SocketServer server;

  @BeforeAll
  static void certificate() throws Exception {
    certificate = TestCertificate.create(dir);
    client = certificate.trustingContext();
    ThreadLocalRandom.current().nextBytes(BIG);
  }

  @AfterEach
  void stop() throws Exception {
    TestSockets.terminate(system);
  }

  /** Starts the test's actor system with the certificate and {@code config}; the config it loaded. */
  private Config startSystem(String config) {
    Config loaded =
        ConfigFactory.parseMap(Map.of("relay.tls-cert", certificate.cert().toString(), "relay.tls-key", certificate.key().toString()))
            .withFallback(ConfigFactory.parseString(config))
            .withFallback(ConfigFactory.load());
    system = ActorSystem.create(Behaviors.empty(), "tls-socket-test", loaded);
    return loaded;
  }

  /** A TLS port on which {@code GET /sized} switches the connection to {@code sized}. */
  private void startSwitchingTo(SizedEcho sized) {
    Config loaded = startSystem("");
    OwnRequests own =
        new OwnRequests() {
          @Override
          public boolean takes(RequestHead head) {
            return head.path().equals("/sized");
          }

          @Override
          public boolean handsOver() {
            return false;
          }

          @Override
          public CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer) {
            return CompletableFuture.completedFuture(Answer.switching(SWITCHED, sized));
          }
        };
    server = TestSockets.bind(system, loaded, Directives.reject(), own, TlsContext.load(HttpSettings.create(loaded)));
  }

  private void start(String config) {
    Config loaded = startSystem(config);
    server =
        TestSockets.bind(
            system, loaded, TestSockets.route(Materializer.matFromSystem(system), BIG), null, TlsContext.load(HttpSettings.create(loaded)));
  }

  /**
   * A protocol that sizes its reads gets, over TLS too, reads that end where it asked: each takes
   * as many TLS records as it needs, up to that size (a read of the TLS layer takes one record).
   * And it hears when the socket is done with each element it gave it, though the socket gathers
   * several to encrypt at once.
   */
  @Test
  void aProtocolThatSizesItsReadsGetsReadsOfSeveralRecordsUpToWhatItAskedFor() throws Exception {
    SizedEcho sized = new SizedEcho(SIZED_READ);
    startSwitchingTo(sized);
    byte[] stream = SwitchedProtocolTest.pattern(50 * SIZED_READ);
    ExecutorService writer = Executors.newSingleThreadExecutor();
    try (SSLSocket socket = connectTls()) {
      TestSockets.send(socket, "GET /sized HTTP/1.1\r\nHost: x\r\n\r\n");
      assertArrayEquals(SWITCHED, socket.getInputStream().readNBytes(SWITCHED.length), "the switching response");
      Future<?> written = writer.submit(() -> { socket.getOutputStream().write(stream); return null; });
      assertArrayEquals(stream, socket.getInputStream().readNBytes(stream.length), "the echo of the whole stream");
      written.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    } finally {
      writer.shutdownNow();
    }
    int largest = sized.largestRead.get();
    assertTrue(largest <= SIZED_READ, "a read of " + largest + " bytes");
    assertTrue(largest > TLS_RECORD, "no read took more than one TLS record: the largest was " + largest + " bytes");
    sized.assertEverythingReportedWritten();
  }

  @Test
  void aReaderSlowerThanTheServerGetsEveryByteInOrder() throws IOException {
    start("");
    Socket tcp = new Socket();
    tcp.setReceiveBufferSize(4096); // the server's writes fill the socket and wait for it
    tcp.connect(server.localAddress());
    try (SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket(tcp, "127.0.0.1", server.localAddress().getPort(), true)) {
      socket.setSoTimeout((int) DEADLINE.toMillis());
      TestSockets.send(socket, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
      RawResponse response = RawResponse.read(socket);
      assertEquals(200, response.status(), response.head());
      assertArrayEquals(BIG, response.body());
    }
  }

  @Test
  void readsALargeUpload() throws IOException {
    start("");
    try (SSLSocket socket = connectTls()) {
      int size = 6 * 1024 * 1024;
      TestSockets.send(socket, "POST /count HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: " + size + "\r\n\r\n");
      socket.getOutputStream().write(BIG, 0, size);
      RawResponse response = RawResponse.read(socket);
      assertEquals(Integer.toString(size), new String(response.body(), StandardCharsets.US_ASCII), response.head());
    }
  }

  @Test
  void aClientThatNeverStartsItsHandshakeIsCutOffAtTheHeaderTimeout() throws IOException {
    start("relay.header-timeout = 1s");
    try (Socket silent = TestSockets.connect(server)) {
      long start = System.nanoTime();
      RawResponse.assertClosedByServer(silent);
      assertTrue(System.nanoTime() - start >= Duration.ofMillis(900).toNanos(), "closed before the header timeout");
    }
    assertAnswersHello();
  }

  @Test
  void plainHttpOnTheTlsPortIsClosedAndThePortGoesOn() throws IOException {
    start("");
    try (Socket plain = TestSockets.connect(server)) {
      TestSockets.send(plain, HELLO);
      RawResponse.assertClosedByServer(plain);
    }
    Await.until("the refused connection is closed", DEADLINE, () -> server.openConnections() == 0);
    assertAnswersHello();
  }

  private void assertAnswersHello() throws IOException {
    try (SSLSocket socket = connectTls()) {
      TestSockets.send(socket, HELLO);
      RawResponse response = RawResponse.read(socket);
      assertEquals(200, response.status(), response.head());
      assertEquals("hello", new String(response.body(), StandardCharsets.UTF_8));
    }
  }

  private SSLSocket connectTls() throws IOException {
    SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", server.localAddress().getPort());
    socket.setSoTimeout((int) DEADLINE.toMillis());
    return socket;
  }
}
