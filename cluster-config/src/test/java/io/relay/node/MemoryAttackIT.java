package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The memory attacks against the packaged jar with a small heap, as an attacker would run them:
 * readers that never read joining a topic one after another while a writer sends 10 MiB
 * messages, and writers that stop in the middle of 10 MiB messages. The node must stay alive and
 * ready, hold at most its memory budget (and the few messages already whole when it sheds), never
 * run out of heap or direct memory, shed what it must (counted), and keep another topic's
 * participants exchanging messages.
 *
 * <p>In {@code mvn -B verify} it runs at CI size (a 256 MiB heap, 24 writers, 128 stalled readers)
 * and prints nothing; {@code -Dattack.scale=full} runs the attack suite's full size (a 512 MiB
 * heap, 200 attackers), see docs/limits.md, and also prints what it measured (peaks of heap,
 * direct memory and what the budget held; the quiet pair's round trips).
 */
class MemoryAttackIT {
  private static final String SECRET = "attack-secret-0123456789abcdef-0123456789";
  private static final int MESSAGE = 10 << 20;
  private static final boolean FULL = "full".equals(System.getProperty("attack.scale"));
  private static final String HEAP = FULL ? "512m" : "256m";
  private static final int ATTACKERS = FULL ? 200 : 24;
  /**
   * Readers that never read: a stalled reader holds only what its channel has not written of the
   * frames in flight and what is queued behind them (about 2 MB each here, measured), so the CI size
   * needs more of them than writers to pass the 128 MiB budget at all, with a margin for readers
   * that joined between two messages and hold less.
   */
  private static final int STALLED_READERS = FULL ? 200 : 128;
  private static final String HEAP_USED = "relay_jvm_heap_used_bytes";
  private static final String HELD = "relay_memory_held_bytes";
  /** Relayed frames live in Netty's direct buffers: capped, by default, at the heap's maximum. */
  private static final String DIRECT = "relay_netty_direct_memory_bytes";
  /** Java's OutOfMemoryError, and Netty's OutOfDirectMemoryError as a connection's end names it. */
  private static final Pattern OUT_OF_MEMORY = Pattern.compile("OutOf\\w*MemoryError");
  /** What the held bytes may pass the budget by: messages already whole when the budget sheds. */
  private static final long SHEDDING_SLACK = 3L * MESSAGE;

  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final List<RawWebSocket> sockets = new ArrayList<>();
  private JarNode node;

  @AfterEach
  void stop() throws Exception {
    threads.shutdownNow();
    try {
      for (RawWebSocket socket : sockets) {
        socket.close();
      }
    } finally {
      if (node != null) {
        node.close();
      }
    }
  }

  private void start() throws IOException {
    node = JarNode.start("relay-attack", SECRET, List.of("-Xmx" + HEAP), Map.of(), 0);
  }

  @Test
  void readersThatNeverRead() throws Exception {
    start();
    try (NodeWatch watch = new NodeWatch(node, HEAP_USED, HELD, DIRECT); QuietPair quiet = new QuietPair(node, "attack/quiet-readers", threads)) {
      quiet.awaitExchanging();
      RawWebSocket writer = open("attack/stalled", "write");
      AtomicBoolean writing = new AtomicBoolean(true);
      Future<?> frames = writer.sendWhile(threads, writing, new byte[MESSAGE]);
      for (int i = 0; i < STALLED_READERS; i++) {
        sockets.add(RawWebSocket.connectWithReceiveBuffer(node.uri("attack/stalled", "read"), 4096));
      }
      int quietBefore = quiet.exchanged(); // the attack is in place
      Await.until("readers are shed", Duration.ofSeconds(60), () -> node.metric("relay_connections_shed_total") > 0, this::holdings);
      writing.set(false);
      frames.cancel(true);
      report("readers that never read", STALLED_READERS, watch, quiet, quietBefore);
    }
  }

  @Test
  void writersStoppedInTheMiddleOfMessages() throws Exception {
    start();
    try (NodeWatch watch = new NodeWatch(node, HEAP_USED, HELD, DIRECT); QuietPair quiet = new QuietPair(node, "attack/quiet-writers", threads)) {
      quiet.awaitExchanging();
      byte[] frame = RawWebSocket.frame(RawWebSocket.BINARY, true, new byte[MESSAGE]);
      byte[] almostAll = Arrays.copyOf(frame, frame.length - MESSAGE / 20);
      for (int i = 0; i < ATTACKERS; i++) {
        RawWebSocket writer = open("attack/partial-" + i, "read", "write");
        sockets.add(writer);
        try {
          writer.sendRaw(almostAll);
        } catch (IOException shedWhileSending) {
          // shed before it was done sending
        }
      }
      int quietBefore = quiet.exchanged(); // the attack is in place
      Await.until("writers are shed", Duration.ofSeconds(60), () -> node.metric("relay_connections_shed_total") > 0, this::holdings);
      report("writers stopped inside messages", ATTACKERS, watch, quiet, quietBefore);
    }
  }

  private void report(String attack, int attackers, NodeWatch watch, QuietPair quiet, int quietBefore) throws Exception {
    Await.until("the quiet topic's participants exchange a message with the attack in place", Duration.ofSeconds(10), () -> quiet.exchanged() > quietBefore);
    long[] latencies = quiet.stop();
    watch.close();
    double shed = node.metric("relay_connections_shed_total");
    double heapMax = node.metric("relay_jvm_heap_max_bytes");
    if (FULL) {
      System.out.printf(
          "attack: %s x %d (-Xmx%s, 10 MiB messages): node alive %s, ready throughout %s (slowest /ready %d ms), heap peak %.0f MiB of %.0f, "
              + "direct memory peak %.0f MiB, held peak %.0f MiB of a %.0f MiB budget, %.0f connections shed; quiet topic: %d messages, p50 %.1f ms, p99 %.1f ms%n",
          attack, attackers, HEAP, node.isAlive(), watch.readyThroughout(), watch.slowestReadyMillis(), watch.peak(HEAP_USED) / 1048576.0,
          heapMax / 1048576.0, watch.peak(DIRECT) / 1048576.0, watch.peak(HELD) / 1048576.0, node.metric("relay_memory_budget_bytes") / 1048576.0, shed, latencies.length,
          QuietPair.percentile(latencies, 50) / 1e6, QuietPair.percentile(latencies, 99) / 1e6);
    }
    assertTrue(node.isAlive(), "the node survived (log: " + node.log() + ")");
    assertTrue(watch.readyThroughout(), "the node stayed ready; /ready answered:" + watch.unreadyAnswers() + " (log: " + node.log() + ")");
    double budget = node.metric("relay_memory_budget_bytes");
    assertTrue(watch.peak(HELD) <= budget + SHEDDING_SLACK,
        "the node held at most its budget (" + budget + ") and the slack of shedding; peak seen " + watch.peak(HELD));
    try (Stream<String> lines = Files.lines(node.log())) {
      assertTrue(lines.noneMatch(line -> OUT_OF_MEMORY.matcher(line).find()), "the node never ran out of memory (log: " + node.log() + ")");
    }
    assertTrue(shed > 0, "what was shed is counted");
  }

  /** What the node holds, for a wait that timed out. */
  private String holdings() {
    return String.format("%.0f MiB held of a %.0f MiB budget, %.0f connections, heap %.0f MiB",
        node.metric(HELD) / 1048576.0, node.metric("relay_memory_budget_bytes") / 1048576.0, node.metric("relay_connections"),
        node.metric(HEAP_USED) / 1048576.0);
  }

  private RawWebSocket open(String topic, String... scopes) throws IOException {
    RawWebSocket socket = RawWebSocket.connect(node.uri(topic, scopes));
    sockets.add(socket);
    return socket;
  }
}
