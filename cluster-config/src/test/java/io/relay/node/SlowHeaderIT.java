package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Slow-header connections against the packaged jar, as an attacker would open them: connections to
 * the relay and access ports (both are the node's own socket server) that send a request head one
 * byte per second and never finish it. Each must be closed by the node (the client sees an end of
 * stream or a reset) within the header timeout of its opening, plus {@link #SLACK}; the node counts
 * them in {@code relay_header_timeouts_total}, stays ready, keeps issuing codes, and two
 * participants of another topic keep passing a message back and forth.
 *
 * <p>In {@code mvn -B verify} it runs at CI size (200 connections, {@code RELAY_HEADER_TIMEOUT=3s})
 * and prints nothing; {@code -Dattack.scale=full} runs the attack suite's full size (1,000
 * connections, the default header timeout of 10 s), see docs/limits.md, and also prints what it
 * measured (when the connections were closed, the quiet pair's round trips). Times are asserted
 * only as the header timeout's bounds.
 */
class SlowHeaderIT {
  private static final String SECRET = "slow-header-secret-0123456789abcdef-0123456789";
  private static final boolean FULL = "full".equals(System.getProperty("attack.scale"));
  private static final int CONNECTIONS = FULL ? 1_000 : 200;
  /** Full size runs with the default (no RELAY_HEADER_TIMEOUT); CI size with a short one. */
  private static final Duration HEADER_TIMEOUT = Duration.ofSeconds(FULL ? 10 : 3);
  private static final Map<String, String> ENV = FULL ? Map.of() : Map.of("RELAY_HEADER_TIMEOUT", "3s");
  /**
   * How much later than the header timeout a close may come and still be the header timeout's:
   * each connection's timer runs on its event loop, which a loaded 2-core machine may delay, as it
   * may the client noticing the close. A deadline, far from anything else that would close such a
   * connection (its head, a byte a second, would take minutes to finish).
   */
  private static final Duration SLACK = Duration.ofSeconds(10);
  private static final Duration TRICKLE = Duration.ofSeconds(1);

  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final List<SlowClient> clients = new ArrayList<>();
  private JarNode node;

  @AfterEach
  void stop() throws Exception {
    threads.shutdownNow();
    try {
      for (SlowClient client : clients) {
        client.channel.close();
      }
    } finally {
      if (node != null) {
        node.close();
      }
    }
  }

  @Test
  void everySlowHeaderConnectionIsClosedAtTheHeaderTimeoutWhileTheNodeServesOthers() throws Exception {
    node = JarNode.start("relay-slow-header", SECRET, List.of(), ENV, 0);
    String token = node.token("attack/late-comer", "read", "write");
    double timeoutsBefore = node.metric("relay_header_timeouts_total");
    long[] latencies;
    int lateComer;
    try (NodeWatch watch = new NodeWatch(node); QuietPair quiet = new QuietPair(node, "attack/quiet-slow-header", threads);
        Selector selector = Selector.open()) {
      Await.until("the quiet pair exchanges messages before the attack", Duration.ofSeconds(30), () -> quiet.exchanged() > 0);
      int quietBefore = quiet.exchanged();
      for (int i = 0; i < CONNECTIONS; i++) {
        boolean relayPort = i % 2 == 0;
        clients.add(SlowClient.open(selector, relayPort ? node.relay : node.access, relayPort ? relayHead(i) : accessHead(i)));
      }
      Future<Integer> lateComerAnswer = trickleUntilAllClosed(selector, () -> node.postSession("attack/late-comer", token));
      lateComer = Await.value("the late-comer's code request is answered during the attack", Duration.ofSeconds(30), lateComerAnswer);
      int quietDuring = quiet.exchanged() - quietBefore;
      latencies = quiet.stop();
      watch.close();
      report(watch, latencies, quietDuring, node.metric("relay_header_timeouts_total") - timeoutsBefore, lateComer);
    }
  }

  /**
   * Sends each open connection its next byte every {@link #TRICKLE} and notes when the node closes
   * it, until all are closed; halfway through the header timeout, {@code meanwhile} is asked once
   * on another thread (a client that comes during the attack): its answer.
   */
  private Future<Integer> trickleUntilAllClosed(Selector selector, Callable<Integer> meanwhile) throws IOException {
    long deadline = System.nanoTime() + HEADER_TIMEOUT.plus(SLACK).plusSeconds(30).toNanos();
    long nextTrickle = System.nanoTime();
    int open = CONNECTIONS;
    Future<Integer> answer = null;
    long askAt = System.nanoTime() + HEADER_TIMEOUT.toNanos() / 2;
    while (open > 0) {
      long now = System.nanoTime();
      if (now > deadline) {
        throw new AssertionError(open + " of " + CONNECTIONS + " slow connections were still open "
            + HEADER_TIMEOUT.plus(SLACK).plusSeconds(30).toSeconds() + " s after the attack began (log: " + node.log() + ")");
      }
      if (answer == null && now >= askAt) {
        answer = threads.submit(meanwhile);
      }
      if (now >= nextTrickle) {
        for (SlowClient client : clients) {
          if (client.closedAt == 0 && client.sendNextByte()) {
            open--;
          }
        }
        nextTrickle += TRICKLE.toNanos();
      }
      selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTrickle - System.nanoTime())));
      for (SelectionKey key : selector.selectedKeys()) {
        if (((SlowClient) key.attachment()).readClosed()) {
          open--;
        }
      }
      selector.selectedKeys().clear();
    }
    return answer != null ? answer : threads.submit(meanwhile);
  }

  private void report(NodeWatch watch, long[] quiet, int quietDuring, double timeouts, int lateComer) {
    long[] lifetimes = clients.stream().mapToLong(c -> c.closedAt - c.openedAt).sorted().toArray();
    long answered = clients.stream().filter(c -> c.answered > 0).count();
    long resets = clients.stream().filter(c -> c.reset).count();
    if (FULL) {
      System.out.printf(
          "attack: slow request heads x %d (one byte per second, half to the relay port, half to the access port), header timeout %d s: "
              + "closed %.2f s after opening at the earliest, p50 %.2f s, p99 %.2f s, worst %.2f s (slack %d s); %d seen as a reset, %d as an end of stream, "
              + "%d answered first; relay_header_timeouts_total +%.0f; ready throughout %s (%d samples, slowest /ready %d ms); "
              + "a code during the attack: %d; quiet pair: %d messages, p50 %.1f ms, p99 %.1f ms%n",
          CONNECTIONS, HEADER_TIMEOUT.toSeconds(), lifetimes[0] / 1e9, QuietPair.percentile(lifetimes, 50) / 1e9,
          QuietPair.percentile(lifetimes, 99) / 1e9, lifetimes[lifetimes.length - 1] / 1e9, SLACK.toSeconds(), resets,
          CONNECTIONS - resets, answered, timeouts, watch.readyThroughout(), watch.samples(), watch.slowestReadyMillis(), lateComer,
          quiet.length, QuietPair.percentile(quiet, 50) / 1e6, QuietPair.percentile(quiet, 99) / 1e6);
    }
    assertEquals(0, answered, "a connection closed at the header timeout gets no answer, only its end");
    assertTrue(lifetimes[lifetimes.length - 1] <= HEADER_TIMEOUT.plus(SLACK).toNanos(),
        "every slow connection was closed within the header timeout (" + HEADER_TIMEOUT.toSeconds() + " s) plus " + SLACK.toSeconds()
            + " s of its opening; the last after " + lifetimes[lifetimes.length - 1] / 1e9 + " s");
    assertTrue(lifetimes[0] >= HEADER_TIMEOUT.toNanos(),
        "no slow connection was closed before the header timeout; the first after " + lifetimes[0] / 1e9 + " s");
    assertTrue(timeouts >= CONNECTIONS, "relay_header_timeouts_total counted every slow connection: +" + timeouts);
    assertTrue(node.isAlive(), "the node survived (log: " + node.log() + ")");
    assertTrue(watch.readyThroughout(), "the node stayed ready; /ready answered:" + watch.unreadyAnswers() + " (log: " + node.log() + ")");
    assertEquals(200, lateComer, "a client that came during the attack got a code");
    assertTrue(quietDuring > 0, "the quiet pair exchanged messages during the attack");
  }

  /** A WebSocket upgrade of the relay port, cut off before its end. */
  private static byte[] relayHead(int i) {
    return ("GET /session/attack/slow-" + i + "?code=AAAAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Pad: ")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** A code request of the access API, cut off before its end. */
  private static byte[] accessHead(int i) {
    return ("POST /session/attack/slow-" + i + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nAuthorization: ")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** One slow connection: the head it trickles, and when it opened and was closed (nanoTime). */
  private static final class SlowClient {
    final SocketChannel channel;
    final byte[] head;
    final long openedAt;
    long closedAt;
    int sent;
    long answered;
    boolean reset;
    private final ByteBuffer readBuffer = ByteBuffer.allocate(1024);

    private SlowClient(SocketChannel channel, byte[] head, long openedAt) {
      this.channel = channel;
      this.head = head;
      this.openedAt = openedAt;
    }

    static SlowClient open(Selector selector, int port, byte[] head) throws IOException {
      SocketChannel channel = SocketChannel.open();
      // stamped before the connect: the node's timer starts at its accept, which may come before connect() returns
      long connecting = System.nanoTime();
      channel.connect(new InetSocketAddress("127.0.0.1", port));
      SlowClient client = new SlowClient(channel, head, connecting);
      channel.configureBlocking(false);
      channel.register(selector, SelectionKey.OP_READ, client);
      return client;
    }

    /** Sends the next byte of the head (never its last); whether that found the connection closed. */
    boolean sendNextByte() {
      if (sent >= head.length - 1) {
        return false;
      }
      try {
        channel.write(ByteBuffer.wrap(head, sent, 1));
        sent++;
        return false;
      } catch (IOException e) {
        return closed(true);
      }
    }

    /** Reads what arrived; whether it was the end of the connection. */
    boolean readClosed() {
      if (closedAt != 0) {
        return false;
      }
      try {
        readBuffer.clear();
        int n = channel.read(readBuffer);
        if (n < 0) {
          return closed(false);
        }
        answered += n;
        return false;
      } catch (IOException e) {
        return closed(true);
      }
    }

    private boolean closed(boolean byReset) {
      closedAt = System.nanoTime();
      reset = byReset;
      try {
        channel.close();
      } catch (IOException e) {
        // already gone
      }
      return true;
    }
  }
}
