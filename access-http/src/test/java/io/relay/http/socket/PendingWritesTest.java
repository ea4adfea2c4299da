package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/** What a socket stage has left to write, and its reports of the elements written whole. */
class PendingWritesTest {
  private final AtomicInteger reported = new AtomicInteger();
  private final PendingWrites pending = new PendingWrites(reported::incrementAndGet);

  private static ByteString ascii(String text) {
    return ByteString.fromString(text, StandardCharsets.US_ASCII);
  }

  /** What a write of at most {@code room} bytes would take now. */
  private String next(int room) {
    ByteBuffer buffer = ByteBuffer.allocate(room);
    pending.fill(buffer);
    buffer.flip();
    return StandardCharsets.US_ASCII.decode(buffer).toString();
  }

  @Test
  void eachElementIsReportedOnceWrittenWholeButTheStagesOwnBytesAreNot() {
    pending.addOwn(ascii("HTTP"));
    pending.add(ascii("abc"));
    pending.add(ascii("de"));
    assertEquals(9, pending.bytes());
    assertEquals("HTTPabcde", next(64));
    pending.written(5); // the stage's own bytes and the first of "abc"
    assertEquals(0, reported.get(), "the stage's own bytes are not an element");
    assertEquals("bcde", next(64), "the rest, from the first unwritten byte");
    pending.written(3);
    assertEquals(1, reported.get(), "\"abc\" written whole");
    pending.written(1);
    assertEquals(2, reported.get());
    assertTrue(pending.isEmpty());
    assertEquals(0, pending.bytes());
  }

  @Test
  void aWriteTakesAsManyPiecesAsFit() {
    pending.add(ascii("abc"));
    pending.add(ascii("def"));
    assertEquals("abcd", next(4));
  }

  @Test
  void anElementWithNothingToWriteIsReportedAtOnce() {
    pending.add(ByteString.emptyByteString());
    assertEquals(1, reported.get());
    assertTrue(pending.isEmpty());
  }
}
