package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.ClientPorts;
import io.relay.http.server.PortCounters;
import io.relay.http.server.PortSettings;
import io.relay.http.server.Requests;
import io.relay.testing.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * An access port's connection as a client sees it, over Netty's embedded channel with a route
 * that answers with the request's path: keep-alive and pipelined requests answered in order,
 * {@code Connection: close} honoured, a body over the limit refused with a JSON 413, too many
 * requests read ahead closing the connection, and an idle connection closed, as is a kept one
 * once the node stops accepting.
 */
class AccessRequestsTest {
  private static final ActorTestKit KIT = ActorTestKit.create("access-requests");
  private static final String PAGE = "http://page.test";
  private static final HttpSettings SETTINGS =
      HttpSettings.create(
          ConfigFactory.parseMap(Map.of("relay.secret", "access-requests-test-secret-0123456789", "relay.cors-origins", PAGE))
              .withFallback(ConfigFactory.load()));
  private static final Duration IDLE = Duration.ofSeconds(120);
  /** The idle timeout of the tests over real sockets, which wait it out. */
  private static final Duration SOCKET_IDLE = Duration.ofSeconds(1);
  private static final Pattern CONTENT_LENGTH = Pattern.compile("\r\nContent-Length: (\\d+)\r\n");

  private final PortCounters counters = new PortCounters();
  private final List<CompletableFuture<HttpResponse>> held = new ArrayList<>();
  /** What the channel wrote that no response() call has returned yet. */
  private final StringBuilder unread = new StringBuilder();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  private EmbeddedChannel connection(boolean holdAnswers) {
    EmbeddedChannel channel = new EmbeddedChannel();
    AccessRequests.install(
        channel.pipeline(),
        request -> answer(request, holdAnswers),
        null,
        new Cors(SETTINGS),
        Materializer.matFromSystem(KIT.system()),
        IDLE,
        counters,
        errors());
    return channel;
  }

  private CompletionStage<HttpResponse> answer(HttpRequest request, boolean hold) {
    if (hold) {
      CompletableFuture<HttpResponse> answer = new CompletableFuture<>();
      held.add(answer);
      return answer;
    }
    return CompletableFuture.completedFuture(HttpResponse.create().withEntity("answer to " + request.getUri().path()));
  }

  private static void send(EmbeddedChannel channel, String bytes) {
    channel.writeInbound(Unpooled.copiedBuffer(bytes, StandardCharsets.ISO_8859_1));
    channel.runPendingTasks();
    channel.checkException();
  }

  /**
   * The next response the channel writes, whole, waiting up to {@code wait} for it (the route's
   * answers complete on Pekko's threads and come back to the channel's loop as tasks); null if
   * none came.
   */
  private String response(EmbeddedChannel channel, Duration wait) {
    StringBuilder text = unread;
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      channel.runPendingTasks();
      for (ByteBuf bytes; (bytes = channel.readOutbound()) != null; ) {
        text.append(bytes.toString(StandardCharsets.ISO_8859_1));
        bytes.release();
      }
      int headEnd = text.indexOf("\r\n\r\n");
      if (headEnd >= 0) {
        Matcher declared = CONTENT_LENGTH.matcher(text.substring(0, headEnd + 2));
        int length = declared.find() ? Integer.parseInt(declared.group(1)) : 0; // 100 Continue has no body
        if (text.length() >= headEnd + 4 + length) {
          String response = text.substring(0, headEnd + 4 + length);
          text.delete(0, headEnd + 4 + length);
          return response;
        }
      }
      if (System.nanoTime() > deadline) {
        return text.length() == 0 ? null : text.toString();
      }
      Thread.onSpinWait();
    }
  }

  private String response(EmbeddedChannel channel) {
    return response(channel, Duration.ofSeconds(5));
  }

  @Test
  void pipelinedRequestsOnAKeptConnectionAreAnsweredInOrder() {
    EmbeddedChannel channel = connection(false);
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\nGET /status/b HTTP/1.1\r\nHost: x\r\n\r\n");
    String first = response(channel);
    String second = response(channel);
    assertNotNull(first, "the first answer");
    assertTrue(first.startsWith("HTTP/1.1 200 ") && first.endsWith("answer to /status/a"), first);
    assertNotNull(second, "the second answer");
    assertTrue(second.endsWith("answer to /status/b"), second);
    assertFalse(first.contains("Connection: close"), first);
    assertTrue(channel.isActive(), "the connection is kept");
    channel.finishAndReleaseAll();
  }

  @Test
  void aHeadRequestIsAnsweredWithoutABodySoTheNextAnswerOnTheConnectionStaysWhole() {
    EmbeddedChannel channel = connection(false);
    send(channel, "HEAD /status/a HTTP/1.1\r\nHost: x\r\n\r\nGET /status/b HTTP/1.1\r\nHost: x\r\n\r\n");
    StringBuilder written = new StringBuilder();
    Await.until("both answers", Duration.ofSeconds(5), () -> {
      channel.runPendingTasks();
      for (ByteBuf bytes; (bytes = channel.readOutbound()) != null; ) {
        written.append(bytes.toString(StandardCharsets.ISO_8859_1));
        bytes.release();
      }
      return written.indexOf("answer to /status/b") >= 0;
    });
    String text = written.toString();
    int firstEnd = text.indexOf("\r\n\r\n") + 4;
    assertTrue(text.startsWith("HTTP/1.1 200 "), text);
    assertTrue(text.startsWith("HTTP/1.1 200 ", firstEnd), "the second answer starts right after the first one's head: " + text);
    assertFalse(text.contains("answer to /status/a"), "no body for the HEAD: " + text);
    channel.finishAndReleaseAll();
  }

  @Test
  void aClientThatDoesNotReadItsAnswersIsNotReadFromUntilItDoes() {
    EmbeddedChannel channel = connection(false);
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, false); // the client reads nothing
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\n");
    assertNotNull(response(channel), "answered");
    assertFalse(channel.config().isAutoRead(), "no more requests are read while the answers wait");
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
    channel.runPendingTasks();
    assertTrue(channel.config().isAutoRead(), "read again once the client has taken its answers");
    channel.finishAndReleaseAll();
  }

  @Test
  void aClientThatDoesNotReadItsAnswersGetsNoMoreOfThemAndIsAskedForNoMoreBytesEvenMidRequest() {
    EmbeddedChannel channel = connection(false);
    AtomicInteger reads = new AtomicInteger();
    channel.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
      @Override
      public void read(ChannelHandlerContext ctx) {
        reads.incrementAndGet(); // what reaches the socket: a request for more bytes
        ctx.read();
      }
    });
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, false); // the client reads nothing
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\n");
    assertNotNull(response(channel), "answered");
    reads.set(0);
    // read ahead in one segment: two whole requests and the head of a third, whose body is still to come
    send(channel, "GET /status/b HTTP/1.1\r\nHost: x\r\n\r\nGET /status/c HTTP/1.1\r\nHost: x\r\n\r\nPOST /status/d HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n");
    String b = response(channel);
    assertTrue(b != null && b.endsWith("answer to /status/b"), "the request being answered when it came is answered: " + b);
    assertNull(response(channel, Duration.ZERO), "no answer to /status/c while the client takes none"); // the answers are tasks of this loop, all run
    assertEquals(0, reads.get(), "no more bytes asked for, though a request is unfinished");
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
    String c = response(channel);
    assertTrue(c != null && c.endsWith("answer to /status/c"), "answered once the client takes its answers: " + c);
    assertTrue(reads.get() > 0, "and read again");
    channel.finishAndReleaseAll();
  }

  @Test
  void connectionCloseIsHonoured() {
    EmbeddedChannel channel = connection(false);
    send(channel, "GET /status HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    String answer = response(channel);
    assertNotNull(answer);
    assertTrue(answer.contains("\r\nConnection: close\r\n"), answer);
    assertFalse(channel.isActive(), "closed once the answer is written");
  }

  @Test
  void aBodyOverTheLimitIsRefusedWithAJson413() {
    EmbeddedChannel channel = connection(false);
    send(channel, "POST /bids/deny HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
        + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n\r\n{");
    assertRefusedWithAJson413(channel);
    channel.finishAndReleaseAll();
  }

  /** The channel's next answer is a JSON 413 with {@code Connection: close}, the channel closed, the body counted. */
  private void assertRefusedWithAJson413(EmbeddedChannel channel) {
    String answer = response(channel);
    assertNotNull(answer, "an answer");
    assertTrue(answer.startsWith("HTTP/1.1 413 "), answer);
    assertTrue(answer.contains("\"code\":413") && answer.contains("\r\nConnection: close\r\n"), answer);
    assertFalse(channel.isActive(), "closed once the answer is written");
    assertEquals(1, counters.oversizedBodies.sum(), "the refused body is counted");
  }

  @Test
  void aHeadRefusedForItselfGetsItsOwnAnswerEvenWhenItAnnouncesABodyOverTheLimit() {
    String tooLarge = "Content-Length: " + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n";
    Map<String, String> requests =
        Map.of(
            "POST /bids/" + "a".repeat(Requests.MAX_TARGET_BYTES) + " HTTP/1.1\r\nHost: x\r\n" + tooLarge + "\r\n{", "414",
            "POST /bids HTTP/1.1\r\nHost: x\r\n" + tooLarge + "X: y\r\n".repeat(Requests.MAX_FIELDS) + "\r\n{", "431");
    requests.forEach(
        (request, status) -> {
          EmbeddedChannel channel = connection(false);
          send(channel, request);
          String answer = response(channel);
          assertTrue(answer != null && answer.startsWith("HTTP/1.1 " + status + " "), "a " + status + ", not the body's 413: " + answer);
          assertFalse(channel.isActive(), "closed once the answer is written");
          channel.finishAndReleaseAll();
        });
    assertEquals(2, counters.malformedHeads.sum(), "each refused head is counted as malformed");
    assertEquals(0, counters.oversizedBodies.sum(), "and not as a body refused");
  }

  @Test
  void aRequestAfterAHeadWhoseBodyIsRefusedIsNeitherAnsweredNorCounted() {
    EmbeddedChannel channel = connection(false);
    String oversized = "POST /bids/deny HTTP/1.1\r\nHost: x\r\nContent-Length: " + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n\r\n";
    send(channel, oversized + "{".repeat(AccessRequests.MAX_BODY_BYTES + 1) + oversized + "{");
    assertRefusedWithAJson413(channel);
    assertNull(response(channel, Duration.ofMillis(200)), "one answer, the first head's");
    channel.finishAndReleaseAll();
  }

  @Test
  void aBodyOverTheLimitAnnouncedWithExpectContinueGetsTheSameJson413BeforeItIsSent() {
    EmbeddedChannel channel = connection(false);
    send(channel, "POST /bids/deny HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: "
        + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n\r\n");
    assertRefusedWithAJson413(channel); // before the body, which is then never read
  }

  @Test
  void aBodyWithinTheLimitAnnouncedWithExpectContinueIsInvitedAndAnswered() {
    EmbeddedChannel channel = connection(false);
    send(channel, "POST /bids/deny HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
    String invited = response(channel, Duration.ofSeconds(5));
    assertNotNull(invited, "100 Continue");
    assertTrue(invited.startsWith("HTTP/1.1 100 Continue"), invited);
    send(channel, "{}");
    String answer = response(channel);
    assertNotNull(answer, "the answer once the body came");
    assertTrue(answer.startsWith("HTTP/1.1 200 ") && answer.endsWith("answer to /bids/deny"), answer);
    assertEquals(0, counters.oversizedBodies.sum());
    channel.finishAndReleaseAll();
  }

  @Test
  void anExpectationOtherThanContinueGetsAJson417AndTheConnectionCloses() {
    EmbeddedChannel channel = connection(false);
    send(channel, "POST /bids/deny HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\n{}GET /status HTTP/1.1\r\nHost: x\r\n\r\n");
    String answer = response(channel);
    assertNotNull(answer);
    assertTrue(answer.startsWith("HTTP/1.1 417 ") && answer.contains("\"code\":417"), answer);
    assertTrue(answer.contains("\r\nConnection: close\r\n"), answer);
    assertFalse(channel.isActive(), "closed once the answer is written");
    assertNull(response(channel, Duration.ofMillis(200)), "the request after it is not answered");
  }

  @Test
  void theAnswersThePortMakesItselfNameAnAllowedOriginAsTheRoutesAnswersDo() {
    String origin = "Origin: " + PAGE + "\r\n";
    Map<String, String> requests =
        Map.of(
            "413", "POST /bids/deny HTTP/1.1\r\nHost: x\r\n" + origin + "Content-Length: " + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n\r\n{",
            "417", "POST /bids/deny HTTP/1.1\r\nHost: x\r\n" + origin + "Expect: something-else\r\nContent-Length: 0\r\n\r\n",
            "501", "BREW /status HTTP/1.1\r\nHost: x\r\n" + origin + "\r\n",
            "431", "GET /status HTTP/1.1\r\nHost: x\r\n" + origin + "X: y\r\n".repeat(Requests.MAX_FIELDS) + "\r\n",
            "500", "GET /status HTTP/1.1\r\nHost: x\r\n" + origin + "\r\n");
    requests.forEach(
        (status, request) -> {
          EmbeddedChannel channel = connection(status.equals("500"));
          send(channel, request);
          if (status.equals("500")) {
            held.remove(0).completeExceptionally(new IllegalStateException("the route failed"));
          }
          String answer = response(channel);
          assertTrue(answer != null && answer.startsWith("HTTP/1.1 " + status + " "), status + ": " + answer);
          assertTrue(answer.contains("\r\nAccess-Control-Allow-Origin: " + PAGE + "\r\n"), status + ": " + answer);
          assertTrue(answer.contains("\r\nVary: Origin\r\n") && answer.contains("\"code\":" + status), status + ": " + answer);
          channel.finishAndReleaseAll();
        });
  }

  @Test
  void aHeadOfTheMostFieldsIsAnsweredAndOfOneMoreGets431CountedAsSent() {
    String most = "X: y\r\n".repeat(Requests.MAX_FIELDS - 2); // with Host and one more: the most
    Map<String, String> requests =
        Map.of(
            "GET /status HTTP/1.1\r\nHost: x\r\nX: y\r\n" + most + "\r\n", "200",
            "GET /status HTTP/1.1\r\nHost: x\r\nX: y\r\nX: y\r\n" + most + "\r\n", "431",
            "POST /bids HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n" + most + "\r\n{}", "200",
            "POST /bids HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n" + most + "\r\n2\r\n{}\r\n0\r\n\r\n", "200",
            "POST /bids HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nX: y\r\n" + most + "\r\n0\r\n\r\n", "431",
            "GET /status HTTP/1.1\r\nHost: x\r\nX: y\r\nX: y\r\n" + most + "Bad Field: y\r\n\r\n", "400"); // unreadable first
    requests.forEach(
        (request, status) -> {
          EmbeddedChannel channel = connection(false);
          send(channel, request);
          String answer = response(channel);
          assertTrue(answer != null && answer.startsWith("HTTP/1.1 " + status + " "), status + " for " + request.lines().limit(3).toList() + ": " + answer);
          assertEquals(status.equals("431"), answer.contains("\"message\":\"too many header fields\""), answer);
          channel.finishAndReleaseAll();
        });
    assertEquals(3, counters.malformedHeads.sum(), "each refused head is counted as malformed");
  }

  @Test
  void aPipelinedBodyOverTheLimitIsRefusedAfterTheAnswersBeforeIt() {
    EmbeddedChannel channel = connection(true);
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\nPOST /bids/deny HTTP/1.1\r\nHost: x\r\nContent-Length: "
        + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n\r\n{");
    assertNull(response(channel, Duration.ofMillis(200)), "nothing before the first answer");
    held.get(0).complete(HttpResponse.create().withEntity("answer to /status/a"));
    String first = response(channel);
    assertTrue(first != null && first.endsWith("answer to /status/a"), "the first request's answer comes first: " + first);
    assertRefusedWithAJson413(channel);
    channel.finishAndReleaseAll();
  }

  @Test
  void moreRequestsReadAheadThanTheBoundCloseTheConnection() {
    EmbeddedChannel channel = connection(true);
    send(channel, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n".repeat(AccessRequests.MAX_PIPELINED + 1));
    assertTrue(channel.isActive(), "the first is being answered, the rest wait");
    send(channel, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n");
    assertFalse(channel.isActive(), "one more than the bound: closed");
    assertNull(response(channel, Duration.ofMillis(200)), "nothing was answered");
    assertEquals(1, counters.pipelineOverflows.sum(), "the closed connection is counted");
  }

  @Test
  void aKeptConnectionClosesWhenThePortsStopAccepting() {
    EmbeddedChannel channel = connection(false);
    send(channel, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n");
    assertNotNull(response(channel));
    assertTrue(channel.isActive(), "kept between requests");
    channel.pipeline().fireUserEventTriggered(ClientPorts.UNBOUND);
    channel.runPendingTasks();
    assertFalse(channel.isActive(), "closed once the node stops accepting, so its client goes to another node");
  }

  @Test
  void aRequestBeingAnsweredWhenThePortsStopAcceptingGetsItsAnswerWithConnectionClose() {
    EmbeddedChannel channel = connection(true);
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\n");
    channel.pipeline().fireUserEventTriggered(ClientPorts.UNBOUND);
    channel.runPendingTasks();
    assertTrue(channel.isActive(), "open while its request is answered");
    held.get(0).complete(HttpResponse.create().withEntity("answer to /status/a"));
    String answer = response(channel);
    assertNotNull(answer, "the request is answered");
    assertTrue(answer.endsWith("answer to /status/a") && answer.contains("\r\nConnection: close\r\n"), answer);
    assertFalse(channel.isActive(), "closed after its answer");
  }

  @Test
  void aRequestReadWholeAndWaitingForItsClientToTakeAnAnswerIsAnsweredWithConnectionCloseWhenThePortsStopAccepting() {
    EmbeddedChannel channel = connection(true);
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\nGET /status/b HTTP/1.1\r\nHost: x\r\n\r\n");
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, false); // the client takes its answers slowly
    held.get(0).complete(HttpResponse.create().withEntity("answer to /status/a"));
    Await.until("the first answer is written", Duration.ofSeconds(5), () -> {
      channel.runPendingTasks();
      return channel.outboundMessages().size() == 1;
    });
    channel.pipeline().fireUserEventTriggered(ClientPorts.UNBOUND);
    channel.runPendingTasks();
    assertTrue(channel.isActive(), "open while a request read whole waits for its turn");
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, true);
    channel.runPendingTasks();
    Await.until("the second request reaches the route", Duration.ofSeconds(5), () -> held.size() == 2);
    held.get(1).complete(HttpResponse.create().withEntity("answer to /status/b"));
    assertTrue(response(channel).endsWith("answer to /status/a"));
    String second = response(channel);
    assertNotNull(second, "the second request is answered");
    assertTrue(second.endsWith("answer to /status/b") && second.contains("\r\nConnection: close\r\n"), second);
    assertFalse(channel.isActive(), "closed after it");
  }

  @Test
  void everyValueOfAFieldTheRouteAnswersWithIsSent() {
    EmbeddedChannel channel = connection(true);
    send(channel, "GET /status/a HTTP/1.1\r\nHost: x\r\n\r\n");
    held.get(0).complete(HttpResponse.create().addHeaders(List.of(RawHeader.create("Vary", "Origin"), RawHeader.create("Vary", "Accept"))));
    String answer = response(channel);
    assertNotNull(answer, "the request is answered");
    assertTrue(answer.contains("\r\nVary: Origin\r\n") && answer.contains("\r\nVary: Accept\r\n"), "both Vary fields: " + answer);
    channel.finishAndReleaseAll();
  }

  /**
   * A connection that ends partway through a request's header fields (its header timeout, or its
   * client going) is not a malformed request: nothing is counted or logged as one.
   */
  @Test
  void aConnectionEndedInTheMiddleOfAHeadIsNoMalformedRequest() {
    EmbeddedChannel channel = connection(false);
    send(channel, "GET /status HTTP/1.1\r\nHost: x\r\nAccept: ");
    channel.close();
    channel.runPendingTasks();
    assertEquals(0, counters.malformedHeads.sum(), "not counted as malformed");
    channel.finishAndReleaseAll();
  }

  @Test
  void aConnectionIdleForTheIdleTimeoutIsClosedAndCounted() {
    EmbeddedChannel channel = connection(false);
    send(channel, "GET /status HTTP/1.1\r\nHost: x\r\n\r\n");
    assertNotNull(response(channel));
    channel.advanceTimeBy(IDLE.toSeconds() - 1, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();
    assertTrue(channel.isActive(), "not idle yet");
    channel.advanceTimeBy(2, TimeUnit.SECONDS);
    channel.runScheduledPendingTasks();
    assertFalse(channel.isActive(), "closed after the idle timeout");
    assertEquals(1, counters.idleTimeouts.sum());
  }

  /**
   * Over real sockets on loopback: a client that asks for answers larger than the socket buffers
   * hold, the last with {@code Connection: close}, and never reads, so that the last answer is
   * never written whole. Nothing moves either way for the idle timeout, so the connection is
   * closed and counted, as any connection without traffic is; it is not kept until shutdown.
   */
  @Test
  void aConnectionWhoseLastAnswerTheClientNeverTakesIsClosedAtTheIdleTimeout() throws Exception {
    ClientPorts ports = new ClientPorts(PortSettings.create(ConfigFactory.load()), errors());
    try (Socket client = new Socket()) {
      client.setReceiveBufferSize(4096);
      client.connect(serving(ports, largestSendBuffer() / 4)); // eight answers: twice what the kernel's send buffer holds
      String requests = "GET /ui/big HTTP/1.1\r\nHost: x\r\n\r\n".repeat(7) + "GET /ui/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
      client.getOutputStream().write(requests.getBytes(StandardCharsets.US_ASCII));
      Await.until(
          "the connection whose client takes no answer is closed at the idle timeout (" + SOCKET_IDLE.toSeconds() + " s) and counted",
          Duration.ofSeconds(30),
          () -> ports.connections() == 0 && ports.counters().idleTimeouts.sum() == 1,
          () -> ports.connections() + " connections open, " + ports.counters().idleTimeouts.sum() + " idle timeouts");
    } finally {
      ports.terminate(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Over real sockets on loopback: a client on a slow link takes an answer twice the size of the
   * kernel's send buffer for several idle timeouts, a piece at a time. Its bytes going out are
   * traffic: it gets the whole answer. (Once the last of it is in the kernel's send buffer the
   * connection may close as idle; the kernel still sends what it holds.)
   */
  @Test
  void anAnswerTakenSlowerThanTheIdleTimeoutArrivesWhole() throws Exception {
    ClientPorts ports = new ClientPorts(PortSettings.create(ConfigFactory.load()), errors());
    int size = 2 * largestSendBuffer(); // the kernel takes half of it, the rest waits to be written
    try (Socket client = new Socket()) {
      client.setReceiveBufferSize(64 * 1024);
      client.connect(serving(ports, size));
      client.setSoTimeout(10_000);
      client.getOutputStream().write("GET /ui/big HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] piece = new byte[256 * 1024];
      long received = 0;
      long started = System.nanoTime();
      for (int n; received < size && (n = client.getInputStream().read(piece)) > 0; received += n) {
        Await.pause(60); // a slow link: about 4 MB/s at most
      }
      long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
      assertTrue(received >= size, "the whole answer arrived over " + seconds + " s: " + received + " bytes of more than " + size);
      assertTrue(seconds > 2 * SOCKET_IDLE.toSeconds(), "it took longer than twice the idle timeout: " + seconds + " s");
    } finally {
      ports.terminate(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Over real sockets on loopback: a body refused as larger than the limit ends its head's clock,
   * as a request read whole does. Queued behind an answer that takes longer than the header
   * timeout, the 413 comes after that answer, and the connection is not reset at the timeout.
   */
  @Test
  void aBodyRefusedAsTooLargeBehindASlowAnswerStopsItsHeadsClock() throws Exception {
    Duration headerTimeout = Duration.ofSeconds(1);
    ClientPorts ports =
        new ClientPorts(
            PortSettings.create(ConfigFactory.parseMap(Map.of("relay.header-timeout", headerTimeout.toMillis() + "ms")).withFallback(ConfigFactory.load())),
            errors());
    CompletableFuture<HttpResponse> slow = new CompletableFuture<>();
    AtomicInteger asked = new AtomicInteger();
    try (Socket client = new Socket()) {
      client.connect(serving(ports, request -> asked.incrementAndGet() == 1 ? slow : CompletableFuture.completedFuture(HttpResponse.create())));
      client.setSoTimeout(10_000);
      client.getOutputStream().write("GET /status/a HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      Await.until("the first request reaches the route", Duration.ofSeconds(10), () -> asked.get() == 1);
      client.getOutputStream().write(("POST /bids/deny HTTP/1.1\r\nHost: x\r\nContent-Length: " + (AccessRequests.MAX_BODY_BYTES + 1) + "\r\n\r\n{")
          .getBytes(StandardCharsets.US_ASCII));
      Await.pause(2 * headerTimeout.toMillis()); // the header timeout passes while the first answer is on its way
      slow.complete(HttpResponse.create().withEntity("answer to /status/a"));
      String answers = new String(client.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      assertTrue(answers.startsWith("HTTP/1.1 200 ") && answers.contains("answer to /status/a"), "the first answer first: " + answers);
      assertTrue(answers.indexOf("HTTP/1.1 413 ") > answers.indexOf("answer to /status/a"), "then the 413: " + answers);
      assertEquals(0, ports.counters().headerTimeouts.sum(), "no header timeout");
    } finally {
      ports.terminate(Duration.ZERO).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** Binds a port of {@code ports} whose every answer is a body of {@code size} bytes, idle after {@link #SOCKET_IDLE}. */
  private InetSocketAddress serving(ClientPorts ports, int size) {
    String body = "x".repeat(size);
    return serving(ports, request -> CompletableFuture.completedFuture(HttpResponse.create().withEntity(body)));
  }

  /** Binds a port of {@code ports} answering with {@code route}, idle after {@link #SOCKET_IDLE}. */
  private InetSocketAddress serving(ClientPorts ports, Function<HttpRequest, CompletionStage<HttpResponse>> route) {
    return ports.bind(
        "127.0.0.1", 0, Optional.empty(),
        pipeline ->
            AccessRequests.install(
                pipeline,
                route,
                null,
                new Cors(SETTINGS),
                Materializer.matFromSystem(KIT.system()),
                SOCKET_IDLE,
                ports.counters(),
                errors()));
  }

  /** The kernel's largest TCP send buffer (the maximum of Linux's {@code tcp_wmem}, 4 MiB by default). */
  private static int largestSendBuffer() throws IOException {
    return Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/tcp_wmem")).get(0).trim().split("\\s+")[2]);
  }

  private static WarningLimiter errors() {
    return WarningLimiter.start(KIT.system(), LoggerFactory.getLogger(AccessRequestsTest.class), Duration.ofSeconds(10));
  }
}
