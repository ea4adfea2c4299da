package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A node that joins a running cluster redeems codes issued before it existed; a node asked to
 * leave turns unready first, closes its clients with 1001, leaves and stops.
 */
class JoinAndDrainTest {
  private static final Duration DRAIN_DELAY = Duration.ofSeconds(1);

  @Test
  void aLateJoinerRedeemsEarlierCodesThenDrainsCleanlyWhenAskedToLeave() throws Exception {
    // the leave goes through the first node's management port: writes on, with an admin token
    try (TestNode first = TestNode.start(Map.of("relay.management-writes", "on"))) {
      String token = Tokens.session("late/topic", "read", "write");
      String issuedBeforeJoin = new AccessClient(first).relayUri("late/topic", token);

      TestNode late = TestNode.joining(first, Map.of("relay.drain-delay", DRAIN_DELAY.toMillis() + "ms"));
      try {
        String onLate = issuedBeforeJoin.replace(":" + first.relayPort + "/", ":" + late.relayPort + "/");
        Participant client = Participant.connect(onLate);

        first.leave(late);
        long[] unreadyAt = new long[1];
        Await.until("the leaving node's /ready turns false", Duration.ofSeconds(5), () -> {
          unreadyAt[0] = System.nanoTime();
          return late.readyStatus() != 200;
        });
        assertTrue(!client.isClosed(), "/ready turned false before any client was closed");
        assertEquals(1001, client.awaitClose(Duration.ofSeconds(15)), "clients of a draining node get 1001");
        long closedAt = System.nanoTime();
        assertTrue(closedAt - unreadyAt[0] >= DRAIN_DELAY.toNanos() / 2, "clients were closed only after the drain delay");
        Await.value("the node that left terminates", Duration.ofSeconds(30), late.system.getWhenTerminated().toCompletableFuture());
        Await.until("the cluster no longer lists the node that left", Duration.ofSeconds(15), () -> first.memberCount() == 1);
      } finally {
        late.close();
      }
    }
  }

  /**
   * Each shutdown phase of the drain lasts at least what the settings it waits for ask: a longer
   * drain delay, drain spread (with its last graceful closes: the close timeout for what is
   * queued, then as long for the client's answer) or unbind deadline is not cut short by the
   * phase's timeout (Pekko's default is 5 s).
   */
  @Test
  void theDrainsShutdownPhasesLastAtLeastWhatTheirSettingsAsk() {
    RelayNode.Settings settings =
        RelayNode.load(
            ConfigFactory.parseMap(
                Map.of(
                    "relay.secret", TestNode.SECRET,
                    "relay.host", "127.0.0.1",
                    "relay.cluster-transport", "tcp",
                    "relay.drain-delay", "20s",
                    "relay.drain-spread", "30s",
                    "relay.close-timeout", "6s",
                    "relay.unbind-deadline", "40s")));
    Config shutdown = settings.config().getConfig("pekko.coordinated-shutdown");
    Map<String, Duration> asked =
        Map.of("before-service-unbind", Duration.ofSeconds(20), "service-unbind", Duration.ofSeconds(30 + 2 * 6), "service-requests-done", Duration.ofSeconds(40));
    asked.forEach(
        (phase, least) -> {
          String own = "phases." + phase + ".timeout";
          Duration timeout = shutdown.getDuration(shutdown.hasPath(own) ? own : "default-phase-timeout");
          assertTrue(timeout.compareTo(least) > 0, phase + " times out after " + timeout + ", within the " + least + " its setting asks");
        });
  }

  /**
   * A client of the access API whose connection is kept between requests is closed as soon as the
   * node stops accepting, so that it asks another node next, instead of when the unbind deadline
   * (here longer than the wait) runs out; a client that has begun its next request gets its
   * answer, with {@code Connection: close}, and then the close.
   */
  @Test
  void aKeptAccessConnectionIsClosedWhenTheNodeStopsAcceptingAndOneMidRequestIsAnsweredFirst() throws Exception {
    try (TestNode node = TestNode.start(Map.of("relay.unbind-deadline", "60s"));
        Socket kept = new Socket("127.0.0.1", node.accessPort);
        Socket midRequest = new Socket("127.0.0.1", node.accessPort)) {
      for (Socket socket : List.of(kept, midRequest)) {
        socket.setSoTimeout(10_000);
        String answer = RawHttp.answer(socket, "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(answer.startsWith("HTTP/1.1 404 ") && !answer.contains("Connection: close"), answer);
      }
      midRequest.getOutputStream().write("GET /nothing HTTP/1.1\r\n".getBytes(StandardCharsets.ISO_8859_1));
      node.system.terminate();
      try {
        assertEquals(-1, kept.getInputStream().read(), "the node closes the kept connection");
      } catch (SocketTimeoutException e) {
        throw new AssertionError("the kept connection was still open 10 s after the node began to stop", e);
      }
      String last = RawHttp.answer(midRequest, "Host: x\r\n\r\n");
      assertTrue(last.startsWith("HTTP/1.1 404 ") && last.contains("\r\nConnection: close\r\n"), last);
      assertEquals(-1, midRequest.getInputStream().read(), "closed after its answer");
    }
  }
}
