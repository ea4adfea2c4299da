package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A port whose requests the node reads itself, driven by plain sockets: the requests it takes are
 * answered on a kept-alive connection (one after another, pipelined, with small bodies, and while
 * an answer is pending nothing else is answered); the first one it does not take, and everything
 * after it, is Pekko HTTP's; a client that asks to close, or speaks HTTP/1.0, gets its answer and
 * then the end of the connection; the header timeout applies to every request head, not to an
 * idle kept-alive connection.
 */
class RequestConnectionTest extends AllDirectives {
  private static final Duration DEADLINE = TestSockets.DEADLINE;

  private ActorSystem<Void> system;
  private SocketServer server;
  private final AtomicInteger answered = new AtomicInteger();
  /** Completes the answer to {@code POST /own/slow}. */
  private final CompletableFuture<Void> slow = new CompletableFuture<>();

  @AfterEach
  void stop() throws Exception {
    TestSockets.terminate(system);
  }

  /** {@code POST /own/...} is answered by the node ("own PATH N"); Pekko HTTP's route has /hello and /count. */
  private void start(String config) {
    Config loaded = ConfigFactory.parseString(config).withFallback(ConfigFactory.load());
    system = ActorSystem.create(Behaviors.empty(), "request-connection-test", loaded);
    Materializer materializer = Materializer.matFromSystem(system);
    Route route =
        concat(
            path("hello", () -> get(() -> complete("hello"))),
            TestSockets.countRoute(materializer));
    OwnRequests own =
        new OwnRequests() {
          @Override
          public boolean takes(RequestHead head) {
            if (head.path().equals("/own/bug")) {
              throw new IllegalStateException("a bug in the node's own answering");
            }
            return head.method().equals("POST") && head.path().startsWith("/own/");
          }

          @Override
          public CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer) {
            boolean keepAlive = head.keepAlive();
            CompletableFuture<Void> ready = head.path().equals("/own/slow") ? slow : CompletableFuture.completedFuture(null);
            return ready.thenApply(
                done -> {
                  byte[] body = ("own " + head.path() + " " + answered.incrementAndGet()).getBytes(StandardCharsets.UTF_8);
                  byte[] response = PlainResponse.render(200, "OK", List.of(), "text/plain", body, !keepAlive);
                  return keepAlive ? Answer.keepingAlive(response) : Answer.closing(response);
                });
          }
        };
    server = TestSockets.bind(system, loaded, route, own, null);
  }

  @Test
  void requestsItTakesAreAnsweredOnOneConnectionUntilOneItDoesNotTakeHandsTheRestToPekkoHttp() throws IOException {
    start("");
    try (Socket socket = connect()) {
      assertOwn(socket, "/own/a", 1);
      assertOwn(socket, "/own/b", 2);
      send(socket, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
      RawResponse hello = RawResponse.read(socket);
      assertEquals("hello", hello.text(), "Pekko HTTP answers a request the node does not take");
      send(socket, "POST /own/c HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
      assertEquals(404, RawResponse.read(socket).status(), "from then on Pekko HTTP serves the connection");
      assertEquals(2, answered.get());
    }
  }

  @Test
  void pipelinedRequestsWithBodiesAreAnsweredInOrder() throws IOException {
    start("");
    try (Socket socket = connect()) {
      send(
          socket,
          "POST /own/a HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"json\": \"a\"}"
              + "POST /own/b HTTP/1.1\r\nHost: x\r\n\r\n"
              + "POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n12345");
      assertEquals("own /own/a 1", RawResponse.read(socket).text());
      assertEquals("own /own/b 2", RawResponse.read(socket).text(), "the first request's body was not read as a request");
      assertEquals("5", RawResponse.read(socket).text(), "Pekko HTTP got the third request whole");
    }
  }

  @Test
  void thousandsOfPipelinedRequestsAnsweredAtOnceAreAllAnsweredInOrder() throws Exception {
    start("");
    int requests = 5_000;
    try (Socket socket = connect()) {
      Thread writer =
          new Thread(
              () -> {
                try {
                  send(socket, "POST /own/p HTTP/1.1\r\nHost: x\r\n\r\n".repeat(requests));
                } catch (IOException e) {
                  // the reads below fail with what happened
                }
              });
      writer.start();
      for (int i = 1; i <= requests; i++) {
        assertEquals("own /own/p " + i, RawResponse.read(socket).text());
      }
      writer.join(DEADLINE.toMillis());
    }
  }

  @Test
  void aBodyThatArrivesInPiecesIsReadBeforeTheNextRequest() throws IOException {
    start("");
    try (Socket socket = connect()) {
      send(socket, "POST /own/a HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n0123");
      send(socket, "456789");
      assertEquals("own /own/a 1", RawResponse.read(socket).text());
      assertOwn(socket, "/own/b", 2);
    }
  }

  @Test
  void nothingIsAnsweredOutOfOrderWhileAnAnswerIsPending() throws IOException {
    start("");
    try (Socket socket = connect()) {
      send(socket, "POST /own/slow HTTP/1.1\r\nHost: x\r\n\r\nPOST /own/b HTTP/1.1\r\nHost: x\r\n\r\n");
      socket.setSoTimeout(300);
      try {
        int b = socket.getInputStream().read();
        throw new AssertionError("an answer came before the pending one was ready: " + (char) b);
      } catch (SocketTimeoutException expected) {
        // a bounded observation: nothing may come while the first answer is pending
      }
      socket.setSoTimeout((int) DEADLINE.toMillis());
      slow.complete(null);
      assertEquals("own /own/slow 1", RawResponse.read(socket).text());
      assertEquals("own /own/b 2", RawResponse.read(socket).text());
    }
  }

  @Test
  void aChunkedBodyOrAnExpectationIsLeftToPekkoHttp() throws IOException {
    start("");
    assertEquals("5", exchange("POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\n0\r\n\r\n").text());
    assertEquals(
        404,
        exchange("POST /own/a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").status(),
        "a chunked request the node would take is Pekko HTTP's");
    assertEquals(
        404,
        exchange("POST /own/a HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n").status(),
        "a body over the node's own limit is Pekko HTTP's");
    assertEquals(0, answered.get());
  }

  @Test
  void aClientThatAsksToCloseOrSpeaksHttp10GetsItsAnswerAndThenTheEnd() throws IOException {
    start("");
    for (String request :
        List.of("POST /own/a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "POST /own/a HTTP/1.0\r\n\r\n")) {
      try (Socket socket = connect()) {
        send(socket, request);
        RawResponse response = RawResponse.read(socket);
        assertEquals(200, response.status(), request);
        assertEquals("close", response.header("Connection"), request);
        RawResponse.assertClosedByServer(socket);
      }
    }
    try (Socket socket = connect()) {
      assertNull(sendOwn(socket, "/own/b").header("Connection"), "a kept-alive answer does not say close");
    }
  }

  @Test
  void aBugInAnsweringOneConnectionClosesItAndThePortGoesOn() throws IOException {
    start("");
    try (Socket socket = connect()) {
      send(socket, "POST /own/bug HTTP/1.1\r\nHost: x\r\n\r\n");
      RawResponse.assertClosedByServer(socket);
    }
    try (Socket socket = connect()) {
      assertOwn(socket, "/own/a", 1);
    }
  }

  @Test
  void aHeadThePortCannotReadIsLeftToPekkoHttp() throws IOException {
    start("");
    assertEquals(400, exchange("POST /own/a HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n").status());
    assertEquals(0, answered.get());
  }

  @Test
  void theHeaderTimeoutAppliesToEachHeadButNotToAnIdleKeptAliveConnection() throws IOException {
    start("relay.header-timeout = 1s");
    try (Socket idle = connect(); Socket slowHead = connect()) {
      assertOwn(idle, "/own/a", 1);
      assertOwn(slowHead, "/own/b", 2);
      send(slowHead, "POST /own/c HTTP/1.1\r\n");
      RawResponse.assertClosedByServer(slowHead);
      // the slow head was closed after the header timeout; the idle connection, kept alive as
      // long, is still served
      assertOwn(idle, "/own/d", 3);
    }
  }

  private void assertOwn(Socket socket, String path, int n) throws IOException {
    RawResponse response = sendOwn(socket, path);
    assertEquals(200, response.status(), response.head());
    assertEquals("own " + path + " " + n, response.text());
    String date = response.header("Date");
    assertTrue(date != null && date.matches("[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT"), "an IMF-fixdate: " + date);
  }

  private static RawResponse sendOwn(Socket socket, String path) throws IOException {
    send(socket, "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n");
    return RawResponse.read(socket);
  }

  /** The answer to {@code request}, sent on a connection of its own. */
  private RawResponse exchange(String request) throws IOException {
    try (Socket socket = connect()) {
      send(socket, request);
      return RawResponse.read(socket);
    }
  }

  private Socket connect() throws IOException {
    return TestSockets.connect(server);
  }

  private static void send(Socket socket, String text) throws IOException {
    TestSockets.send(socket, text);
  }
}
