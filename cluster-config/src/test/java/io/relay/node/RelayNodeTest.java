package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** What participants of a topic see on one node: relaying, permissions, limits, expiry. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RelayNodeTest {
  private static final Duration QUIET = Duration.ofMillis(500);
  @AutoClose private final TestNode node = TestNode.start(Map.of("relay.max-message-bytes", "64KiB", "relay.ping-interval", "1s"));
  private final AccessClient access = new AccessClient(node);

  private Participant join(String topic, String... scopes) {
    return Participant.connect(access.relayUri(topic, Tokens.session(topic, scopes)));
  }

  @Test
  void twoParticipantsExchangeTextAndBinaryWithoutEcho() {
    try (Participant a = join("lab/pair", "read", "write");
        Participant b = join("lab/pair", "read", "write")) {
      a.sendText("hello from a");
      b.sendBinary(new byte[] {1, 2, 3, 0, (byte) 255});

      Participant.Frame atB = b.next();
      assertTrue(atB.text(), "a text frame stays text");
      assertEquals("hello from a", atB.asText());
      Participant.Frame atA = a.next();
      assertFalse(atA.text(), "a binary frame stays binary");
      assertArrayEquals(new byte[] {1, 2, 3, 0, (byte) 255}, atA.data());

      a.sendText("marker");
      assertEquals("marker", b.next().asText());
      assertTrue(a.frames.isEmpty(), "a participant never receives its own frames");
      assertTrue(b.frames.isEmpty(), "b received only a's frames");
    }
  }

  @Test
  void threeParticipantsSeeEachOthersFramesInSendOrder() {
    try (Participant a = join("lab/three", "read", "write");
        Participant b = join("lab/three", "read", "write");
        Participant c = join("lab/three", "read", "write")) {
      for (int i = 0; i < 50; i++) {
        a.sendText("a" + i);
        b.sendText("b" + i);
      }
      c.sendText("c-done");
      for (Participant reader : List.of(a, b, c)) {
        String own = reader == a ? "a" : reader == b ? "b" : "c";
        int expected = (reader == a ? 0 : 50) + (reader == b ? 0 : 50) + (reader == c ? 0 : 1);
        int nextA = 0;
        int nextB = 0;
        for (int n = 0; n < expected; n++) {
          String text = reader.next().asText();
          assertFalse(text.startsWith(own), own + " received its own frame " + text);
          if (text.startsWith("a")) {
            assertEquals("a" + nextA++, text, "frames of a arrive in send order");
          } else if (text.startsWith("b")) {
            assertEquals("b" + nextB++, text, "frames of b arrive in send order");
          }
        }
      }
    }
  }

  @Test
  void readOnlyFramesReachNobodyAndWriteOnlyReceivesNothing() throws Exception {
    try (Participant writer = join("lab/perm", "read", "write");
        Participant readOnly = join("lab/perm", "read");
        Participant writeOnly = join("lab/perm", "write")) {
      readOnly.sendText("from read-only");
      writeOnly.sendText("from write-only");
      writer.sendText("from writer");

      assertEquals("from write-only", writer.next().asText(), "write scope is enough to send");
      assertEquals(
          Set.of("from writer", "from write-only"),
          Set.of(readOnly.next().asText(), readOnly.next().asText()),
          "the read-only participant receives the frames of both writers");
      Participant.Frame unexpected = writeOnly.frames.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS);
      assertEquals(null, unexpected, "a write-only participant receives nothing");
      assertTrue(writer.frames.isEmpty(), "the read-only participant's frame reached nobody");
    }
  }

  @Test
  void oversizeFrameClosesSenderWith1009() {
    try (Participant sender = join("lab/big", "read", "write");
        Participant other = join("lab/big", "read", "write")) {
      sender.sendBinary(new byte[65 * 1024]);
      assertEquals(1009, sender.awaitClose(Duration.ofSeconds(5)));
      try (Participant later = join("lab/big", "read", "write")) {
        later.sendText("after");
        assertEquals("after", other.next().asText(), "the oversize frame was not relayed");
      }
    }
  }

  /**
   * A token is good until its {@code exp} and the clock skew allowance after it
   * ({@code RELAY_TOKEN_LEEWAY}, 5 s): one that expired a second ago gets a code, the code opens
   * a connection, and the connection is closed with 4000 once the allowance is over.
   */
  @Test
  void aConnectionClosesWith4000OnceItsTokensExpiryAndTheClockSkewAllowanceHavePassed() {
    Instant expiry = Instant.ofEpochSecond(Instant.now().getEpochSecond() - 1);
    String token = Tokens.sign(Tokens.session("lab/expiry", List.of("read", "write"), "booking-1").expirationTime(Date.from(expiry)).build());
    try (Participant p = Participant.connect(access.relayUri("lab/expiry", token))) {
      assertEquals(4000, p.awaitClose(Duration.ofSeconds(10)));
      assertFalse(Instant.now().isBefore(expiry.plusSeconds(5)), "closed once the allowance was over, not before");
    }
  }

  @Test
  void stalledReaderDoesNotSlowWriterOrOtherReaders() {
    String topic = "lab/slow";
    try (Participant writer = join(topic, "read", "write");
        Participant fast = join(topic, "read");
        Participant stalled =
            Participant.connect(access.relayUri(topic, Tokens.session(topic, "read")), false)) {
      byte[] frame = new byte[32 * 1024];
      int count = 1000;
      for (int i = 0; i < count; i++) {
        frame[0] = (byte) i;
        frame[1] = (byte) (i >> 8);
        writer.sendBinary(frame.clone());
        Participant.Frame got = fast.next();
        assertEquals(i, (got.data()[0] & 0xFF) | ((got.data()[1] & 0xFF) << 8), "the fast reader gets every frame in order");
      }
      Await.until(
          "/status reports frames dropped for the stalled reader",
          Duration.ofSeconds(10),
          () -> droppedFor(topic, false) > 0);
      assertEquals(0, droppedFor(topic, true), "nothing was dropped for the fast reader");
      assertFalse(stalled.isClosed(), "a slow reader is not disconnected");
    }
  }

  /**
   * A reader that reads nothing at first fills its connection, and its queue overflows; once it
   * reads, several writers sending at once must still give it whole messages, each writer's in
   * order, ending with the last one sent (a queue drops its oldest, never its newest).
   */
  @Test
  void concurrentWritersReachAReaderWhoseSocketFilledWithWholeMessagesInOrder() throws Exception {
    String topic = "lab/direct";
    int writers = 3;
    int messages = 800;
    int size = 48 * 1024;
    List<Participant> senders = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(writers);
    try (Participant reader =
        Participant.connect(access.relayUri(topic, Tokens.session(topic, "read")), false)) {
      for (int w = 0; w < writers; w++) {
        senders.add(join(topic, "write"));
      }
      // one writer alone until the reader's connection is full and its queue overflows
      int first = 0;
      while (first % 10 != 0 || droppedFor(topic, false) == 0) {
        assertTrue(first < messages, "the node dropped nothing for the stalled reader within " + first + " messages");
        senders.get(0).sendBinary(pattern(0, first, size));
        first++;
      }
      int firstAlone = first;
      reader.resume();
      List<Future<?>> sending = new ArrayList<>();
      for (int w = 0; w < writers; w++) {
        Participant sender = senders.get(w);
        int id = w;
        sending.add(
            pool.submit(
                () -> {
                  for (int n = id == 0 ? firstAlone : 0; n < messages; n++) {
                    sender.sendBinary(pattern(id, n, size));
                  }
                }));
      }
      for (Future<?> f : sending) {
        Await.value("a writer sends all its messages", Duration.ofSeconds(60), f);
      }
      // a reader slower than three writers loses its oldest queued frames (counted in /status),
      // so the run ends when every message is either received or counted as dropped
      int total = writers * messages;
      int[] next = new int[writers];
      int received = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (true) {
        Participant.Frame frame = reader.frames.poll(100, TimeUnit.MILLISECONDS);
        if (frame == null) {
          long dropped = droppedFor(topic, false);
          if (received + dropped >= total) {
            assertEquals(total, received + dropped, "each message is received once or counted as dropped");
            break;
          }
          assertTrue(
              System.nanoTime() < deadline,
              "within 30 s the reader received " + received + " and the node dropped " + dropped + " of " + total + " messages");
          continue;
        }
        byte[] data = frame.data();
        int id = data[0];
        int n = (data[1] & 0xFF) | ((data[2] & 0xFF) << 8);
        assertArrayEquals(pattern(id, n, size), data, "message " + n + " of writer " + id + " arrived whole");
        assertTrue(n >= next[id], "writer " + id + "'s message " + n + " arrived after " + (next[id] - 1));
        next[id] = n + 1;
        received++;
      }
      assertTrue(Arrays.stream(next).anyMatch(n -> n == messages), "the last message sent reached the reader: " + Arrays.toString(next));
    } finally {
      pool.shutdownNow();
      senders.forEach(Participant::close);
    }
  }

  /**
   * Large messages go to a reader that keeps up, one whose connection fills and who loses its
   * oldest frames, and one that leaves mid-stream with frames in flight: none of them changes what
   * the others get. Every message a reader receives is byte for byte the one sent, in send order,
   * and each that stays gets the last.
   */
  @Test
  void largeMessagesReachEveryReaderUnchangedWhileOthersStallOrLeave() {
    String topic = "lab/large";
    int messages = 0;
    try (Participant writer = join(topic, "write");
        Participant fast = join(topic, "read");
        Participant stalled = Participant.connect(access.relayUri(topic, Tokens.session(topic, "read")), false);
        Participant leaving = join(topic, "read")) {
      // until the stalled reader's socket is full and its queue overflows, then more
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (messages % 20 != 0 || droppedFor(topic, false) == 0) {
        assertTrue(
            messages < 3_000 && System.nanoTime() < deadline,
            "the node dropped nothing for the stalled reader within " + messages + " messages and 30 s");
        writer.sendBinary(pattern(0, messages, LARGE_MESSAGE));
        messages++;
        if (messages == 100) {
          leaving.close();
        }
      }
      // it reads again while new messages are read into the arrays its last frames were in
      stalled.resume();
      for (int i = 0; i < 300; i++) {
        writer.sendBinary(pattern(0, messages, LARGE_MESSAGE));
        messages++;
      }
      for (Participant reader : List.of(fast, stalled)) {
        String which = reader == fast ? "the reader that keeps up" : "the reader whose socket filled";
        int last = -1;
        while (last < messages - 1) {
          byte[] data = reader.next(Duration.ofSeconds(20)).data();
          int n = (data[1] & 0xFF) | ((data[2] & 0xFF) << 8);
          assertTrue(n > last, which + " got message " + n + " after " + last);
          assertArrayEquals(pattern(0, n, LARGE_MESSAGE), data, which + ": message " + n + " arrived as sent");
          last = n;
        }
      }
    }
  }

  @Test
  void fragmentedMessagesArriveWholeAsSent() {
    String topic = "lab/fragments";
    try (Participant writer = join(topic, "write");
        Participant reader = join(topic, "read")) {
      for (int n = 0; n < 100; n++) {
        byte[] data = pattern(1, n, 2 * FRAGMENT);
        writer.sendBinaryInFragments(data, FRAGMENT);
        assertArrayEquals(data, reader.next(Duration.ofSeconds(20)).data(), "message " + n + " arrived as sent");
      }
    }
  }

  /** 30,000 bytes: two of it are a message within the node's limit. */
  private static final int FRAGMENT = 30_000;

  /** 40,000 bytes: a large message, several to a channel's write buffer. */
  private static final int LARGE_MESSAGE = 40_000;

  /** A message of {@code size} bytes naming its writer and number, the rest a pattern of both. */
  private static byte[] pattern(int writer, int n, int size) {
    byte[] data = new byte[size];
    data[0] = (byte) writer;
    data[1] = (byte) n;
    data[2] = (byte) (n >> 8);
    for (int i = 3; i < size; i++) {
      data[i] = (byte) (i * 31 + n * 7 + writer);
    }
    return data;
  }

  /** Frames dropped, per /status, for the read-only connection of the topic (the stalled one or not). */
  private long droppedFor(String topic, boolean fast) {
    JsonNode reports = access.get("/status", Tokens.admin("relay:stats")).body();
    long max = 0;
    long min = Long.MAX_VALUE;
    for (JsonNode report : reports) {
      if (report.get("topic").asText().equals(topic) && !report.get("can_write").asBoolean()) {
        long dropped = report.get("stats").get("dropped").asLong();
        max = Math.max(max, dropped);
        min = Math.min(min, dropped);
      }
    }
    return fast ? min : max;
  }

  @Test
  void idleConnectionsArePinged() throws Exception {
    try (Participant idle = join("lab/idle", "read")) {
      Await.value("the node pings an idle connection", Duration.ofSeconds(5), idle.pinged);
      assertFalse(idle.isClosed(), "a pinged connection stays open");
    }
  }

  /**
   * A reader that only receives, a browser watching a camera say, sends nothing of its own but the
   * pongs its client answers the node's pings with (the JDK's client, like a browser, answers
   * them by itself): it stays past the idle timeout while a stream flows to it, and gets all of it.
   */
  @Test
  void aReaderThatOnlyReceivesAStreamStaysPastTheIdleTimeout() {
    Duration idleTimeout = Duration.ofSeconds(3);
    try (TestNode quick = TestNode.start(Map.of("relay.ping-interval", "1s", "relay.idle-timeout", idleTimeout.toSeconds() + "s"));
        Participant camera = Participant.connect(new AccessClient(quick).relayUri("lab/stream", Tokens.session("lab/stream", "write")));
        Participant viewer = Participant.connect(new AccessClient(quick).relayUri("lab/stream", Tokens.session("lab/stream", "read")))) {
      long end = System.nanoTime() + 2 * idleTimeout.toNanos();
      for (int n = 0; System.nanoTime() < end; n++) {
        camera.sendBinary(new byte[] {(byte) n});
        assertArrayEquals(new byte[] {(byte) n}, viewer.next().data(), "frame " + n + " reached the viewer");
        Await.pause(100); // a stream of ten frames a second
      }
      assertFalse(viewer.isClosed(), "the viewer is still connected after twice the idle timeout");
    }
  }

  @Test
  void textFramesCarryUtf8Unchanged() {
    try (Participant a = join("lab/utf8", "read", "write");
        Participant b = join("lab/utf8", "read", "write")) {
      String text = "Grüße, 実験 🧪 ".repeat(2000);
      a.sendText(text);
      assertEquals(text, b.next().asText(), "a large multi-byte text frame arrives intact");
    }
  }
}
