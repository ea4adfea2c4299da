package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.testing.Await;
import java.io.IOException;
import java.net.ConnectException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The socket transport under Pekko HTTP, driven by plain sockets: keep-alive, half-close, a
 * reader slower than the server (writes that fill the socket), a large upload, max-connections,
 * the idle timeout, unbind and terminate, and many clients vanishing mid-answer (no connection
 * may be left open).
 */
class SocketServerTest {
  private static final Duration DEADLINE = TestSockets.DEADLINE;
  private static final byte[] BIG = pattern(16 * 1024 * 1024);
  private static final String HELLO = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";

  private ActorSystem<Void> system;
  private SocketServer server;

  @AfterEach
  void stop() throws Exception {
    TestSockets.terminate(system);
  }

  private void start(String config) {
    system =
        ActorSystem.create(
            Behaviors.empty(), "socket-test", ConfigFactory.parseString(config).withFallback(ConfigFactory.load()));
    server =
        TestSockets.bind(
            system, system.settings().config(), TestSockets.route(Materializer.matFromSystem(system), BIG), null, null);
  }

  @Test
  void answersSeveralRequestsOnOneConnection() throws IOException {
    start("");
    try (Socket socket = connect()) {
      for (int i = 0; i < 3; i++) {
        assertAnswersHello(socket);
      }
    }
  }

  @Test
  void aClientThatClosesItsSideAfterTheRequestStillGetsTheAnswer() throws IOException {
    start("");
    try (Socket socket = connect()) {
      send(socket, HELLO);
      socket.shutdownOutput();
      assertEquals("hello", body(socket));
      assertEquals(-1, socket.getInputStream().read(), "the server closes the connection after the answer");
    }
  }

  @Test
  void aReaderSlowerThanTheServerGetsEveryByteInOrder() throws IOException {
    start("");
    try (Socket socket = new Socket()) {
      socket.setReceiveBufferSize(4096); // the server's writes fill the socket and wait for it
      socket.setSoTimeout((int) DEADLINE.toMillis());
      socket.connect(server.localAddress());
      send(socket, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
      byte[] body = bodyBytes(socket);
      assertEquals(BIG.length, body.length);
      assertArrayEquals(BIG, body);
    }
  }

  @Test
  void readsALargeUpload() throws IOException {
    start("");
    try (Socket socket = connect()) {
      int size = 6 * 1024 * 1024; // under Pekko HTTP's default max-content-length of 8m
      send(socket, "POST /count HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: " + size + "\r\n\r\n");
      socket.getOutputStream().write(BIG, 0, size);
      assertEquals(Integer.toString(size), body(socket));
    }
  }

  @Test
  void connectionsAreSharedOutBetweenThePortsSelectorsInTurn() throws IOException {
    start("relay.socket-selectors = 3");
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < 6; i++) {
        Socket socket = connect();
        sockets.add(socket);
        assertAnswersHello(socket);
      }
      assertArrayEquals(new int[] {2, 2, 2}, server.connectionsPerSelector(), "connections served by each selector");
    } finally {
      for (Socket socket : sockets) {
        socket.close();
      }
    }
  }

  @Test
  void pastMaxConnectionsANewConnectionWaitsUntilAnotherCloses() throws IOException {
    start("relay.max-connections = 1");
    try (Socket first = connect(); Socket second = connect()) {
      assertAnswersHello(first);
      send(second, HELLO);
      second.setSoTimeout(500);
      // a bounded observation, not a wait for a condition: nothing may come while the first is open
      assertThrows(SocketTimeoutException.class, () -> second.getInputStream().read(), "the second connection was served past max-connections");
      first.close();
      second.setSoTimeout((int) DEADLINE.toMillis());
      assertEquals("hello", body(second));
    }
  }

  @Test
  void anIdleConnectionIsClosedAfterTheIdleTimeout() throws IOException {
    start("pekko.http.server.idle-timeout = 1s");
    try (Socket socket = connect()) {
      assertAnswersHello(socket);
      long start = System.nanoTime();
      RawResponse.assertClosedByServer(socket);
      assertTrue(System.nanoTime() - start >= Duration.ofMillis(900).toNanos(), "closed before the idle timeout");
    }
  }

  @Test
  void aRequestHeadSentTooSlowlyIsCutOffAtTheHeaderTimeout() throws IOException {
    start("relay.header-timeout = 1s");
    try (Socket slow = connect(); Socket silent = connect()) {
      long start = System.nanoTime();
      send(slow, "GET /hello HTTP/1.1\r\nHo");
      RawResponse.assertClosedByServer(slow);
      assertTrue(System.nanoTime() - start >= Duration.ofMillis(900).toNanos(), "closed before the header timeout");
      RawResponse.assertClosedByServer(silent);
    }
    try (Socket quick = connect()) {
      assertAnswersHello(quick);
    }
  }

  @Test
  void aConnectionThatSentAWholeRequestIsNotCutOffByTheHeaderTimeout() throws IOException {
    start("relay.header-timeout = 1s");
    try (Socket socket = connect()) {
      assertAnswersHello(socket);
      socket.setSoTimeout(2_000);
      // a bounded observation: the header timeout must not close a connection between requests
      assertThrows(SocketTimeoutException.class, () -> socket.getInputStream().read(), "closed between requests");
      assertAnswersHello(socket);
    }
  }

  @Test
  void unbindStopsAcceptingAndKeepsOpenConnectionsServed() throws Exception {
    start("");
    try (Socket socket = connect()) {
      assertAnswersHello(socket);
      server.unbind().toCompletableFuture().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
      assertThrows(ConnectException.class, this::connect, "a new connection was accepted after unbind");
      assertAnswersHello(socket);
    }
  }

  @Test
  void terminateClosesWhatIsStillOpenAtTheDeadline() throws Exception {
    start("");
    try (Socket socket = connect()) {
      assertAnswersHello(socket);
      server.terminate(Duration.ofMillis(300)).toCompletableFuture().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
      RawResponse.assertClosedByServer(socket);
      assertEquals(0, server.openConnections());
    }
  }

  @Test
  void clientsThatVanishInTheMiddleOfAnAnswerLeaveNothingOpen() throws Exception {
    start("");
    int clients = 200;
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        boolean reset = i % 2 == 0;
        done.add(
            pool.submit(
                () -> {
                  try (Socket socket = connect()) {
                    send(socket, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
                    socket.getInputStream().readNBytes(64 * 1024); // the server is still writing
                    if (reset) {
                      socket.setSoLinger(true, 0); // close with a reset, as a crashed client
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    Await.until("the server closes all " + clients + " vanished connections", DEADLINE, () -> server.openConnections() == 0);
    try (Socket socket = connect()) {
      assertAnswersHello(socket);
    }
  }

  private Socket connect() throws IOException {
    return TestSockets.connect(server);
  }


  /** One GET on the connection, answered with 200 "hello". */
  private static void assertAnswersHello(Socket socket) throws IOException {
    send(socket, HELLO);
    assertEquals("hello", body(socket));
  }

  private static void send(Socket socket, String text) throws IOException {
    TestSockets.send(socket, text);
  }


  /** Reads one response and returns its body as text; fails on a status other than 200. */
  private static String body(Socket socket) throws IOException {
    return new String(bodyBytes(socket), StandardCharsets.UTF_8);
  }

  private static byte[] bodyBytes(Socket socket) throws IOException {
    RawResponse response = RawResponse.read(socket);
    assertEquals(200, response.status(), response.head());
    return response.body();
  }



  private static byte[] pattern(int size) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i * 31 + (i >>> 11));
    }
    return bytes;
  }
}
