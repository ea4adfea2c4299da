package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The node-wide memory budget under the two attacks that pin memory with few connections:
 * readers that never read, joining one after another while a writer sends large messages, and
 * writers that stop in the middle of large messages. The node stays within its budget by
 * shedding the connections that hold the most, and another topic's participants go on. (The
 * attack suite's CI-sized form; {@code docs/limits.md} has the full one.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OverloadTest {
  private static final long BUDGET = 24L << 20;
  private static final int MESSAGE = 4 << 20;
  /**
   * What may pass the budget for a moment: what arrives while the connections shed let go (they
   * do so on their own event loops), a few of the largest messages.
   */
  private static final long SLACK = 3L * MESSAGE;

  private TestNode node;
  private AccessClient access;
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @BeforeAll
  void start() {
    // each reader's queue may hold more than the whole budget: readers that stalled together share
    // the frames they hold, which count once, so only a queue longer than the budget passes it
    node =
        TestNode.start(
            Map.of(
                "relay.memory-budget", String.valueOf(BUDGET),
                "relay.max-message-bytes", String.valueOf(MESSAGE),
                "relay.buffer-bytes", String.valueOf(4 * BUDGET)));
    access = new AccessClient(node);
  }

  @AfterAll
  void stop() {
    threads.shutdownNow();
    node.close();
  }

  private RawWebSocket open(String topic, String... scopes) throws IOException {
    return RawWebSocket.connect(access.relayUri(topic, Tokens.session(topic, scopes)));
  }

  /** Samples what the node holds every 20 ms until closed; the highest sample seen. */
  private final class HeldSampler implements AutoCloseable {
    final AtomicLong peak = new AtomicLong();
    final AtomicLong samples = new AtomicLong();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();

    HeldSampler() {
      sampler.scheduleAtFixedRate(this::sample, 0, 20, TimeUnit.MILLISECONDS);
    }

    private void sample() {
      try {
        double held = node.metric("relay_memory_held_bytes");
        assertTrue(held >= 0, "the node exports relay_memory_held_bytes");
        peak.accumulateAndGet((long) held, Math::max);
        samples.incrementAndGet();
      } catch (Throwable e) {
        failure.compareAndSet(null, e);
        throw e; // no further samples: the test fails at close
      }
    }

    /** The highest sample, failing if sampling failed or never ran. */
    long peak() {
      assertNull(failure.get(), () -> "sampling the node failed: " + failure.get());
      assertTrue(samples.get() > 0 && peak.get() > 0, "the node was sampled holding something: " + samples.get() + " samples");
      return peak.get();
    }

    @Override
    public void close() {
      sampler.shutdownNow();
    }
  }

  /** Two participants of a quiet topic exchanging small messages: each must arrive in time. */
  private void assertQuietTopicStillWorks(String topic) throws Exception {
    try (Participant a = Participant.connect(access.relayUri(topic, Tokens.session(topic, "read", "write")));
        Participant b = Participant.connect(access.relayUri(topic, Tokens.session(topic, "read", "write")))) {
      for (int i = 0; i < 20; i++) {
        a.sendText("ping " + i);
        assertEquals("ping " + i, b.next().asText(), "a quiet topic's message " + i + " arrives");
      }
    }
  }

  @Test
  void readersThatNeverReadAreShedAndTheNodeStaysWithinItsBudget() throws Exception {
    double shedBefore = node.metric("relay_connections_shed_total");
    String topic = "overload/stalled";
    List<RawWebSocket> stalled = new ArrayList<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    try (RawWebSocket writer = open(topic, "write");
        HeldSampler held = new HeldSampler()) {
      Future<?> frames = writer.sendWhile(threads, writing, new byte[MESSAGE]);
      for (int i = 0; i < 16; i++) {
        String uri = access.relayUri(topic, Tokens.session(topic, "read"));
        stalled.add(RawWebSocket.connectWithReceiveBuffer(uri, 4096));
      }
      Await.until(
          "the node sheds stalled readers",
          Duration.ofSeconds(30),
          () -> node.metric("relay_connections_shed_total") > shedBefore,
          () -> "held " + node.metric("relay_memory_held_bytes"));
      assertQuietTopicStillWorks("overload/quiet-1");
      writing.set(false);
      Await.value("the writers stop", Duration.ofSeconds(30), frames);
      assertTrue(
          held.peak() <= BUDGET + SLACK,
          "the node held at most its budget (" + BUDGET + ") and the slack of shedding; peak seen " + held.peak.get());
      assertEquals(200, node.readyStatus(), "the node stays ready");
    } finally {
      writing.set(false);
      for (RawWebSocket socket : stalled) {
        socket.close();
      }
    }
  }

  @Test
  void writersStoppedInTheMiddleOfLargeMessagesAreShedWith1013() throws Exception {
    double shedBefore = node.metric("relay_connections_shed_total");
    List<RawWebSocket> writers = new ArrayList<>();
    try (HeldSampler held = new HeldSampler()) {
      byte[] almostWhole = new byte[MESSAGE - MESSAGE / 20];
      for (int i = 0; i < 12; i++) {
        RawWebSocket writer = open("overload/partial-" + i, "read", "write");
        writers.add(writer);
        // the header announces a whole message; 95 % of it follows, and then nothing
        byte[] frame = RawWebSocket.frame(RawWebSocket.BINARY, true, new byte[MESSAGE]);
        try {
          writer.sendRaw(java.util.Arrays.copyOf(frame, frame.length - (MESSAGE - almostWhole.length)));
        } catch (IOException shedWhileSending) {
          // shed before it finished sending: its close is read below like the others'
        }
      }
      Await.until(
          "the node sheds writers holding partial messages",
          Duration.ofSeconds(30),
          () -> node.metric("relay_connections_shed_total") > shedBefore,
          () -> "held " + node.metric("relay_memory_held_bytes"));
      int closedWith1013 = 0;
      for (RawWebSocket writer : writers) {
        writer.socket.setSoTimeout(200);
        try {
          RawWebSocket.Frame close = writer.next();
          if (close.opcode() == RawWebSocket.CLOSE && close.closeCode() == 1013) {
            closedWith1013++;
          }
        } catch (IOException stillOpen) {
          // not shed: it holds less than the ones that were
        }
      }
      assertTrue(closedWith1013 > 0, "shed writers see 1013");
      double shed = node.metric("relay_connections_shed_total") - shedBefore;
      assertTrue(shed < writers.size(), "only the writers needed to get back under the budget are shed: " + shed + " of " + writers.size());
      assertQuietTopicStillWorks("overload/quiet-2");
      assertTrue(
          held.peak() <= BUDGET + SLACK,
          "the node held at most its budget (" + BUDGET + ") and the slack of shedding; peak seen " + held.peak.get());
    } finally {
      for (RawWebSocket writer : writers) {
        writer.close();
      }
    }
  }
}
