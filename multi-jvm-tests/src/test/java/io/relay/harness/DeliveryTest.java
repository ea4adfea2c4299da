package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.bench.SelectorLoop;
import io.relay.testing.Await;
import io.relay.ws.CloseCodes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The delivery analysis on recorded histories: what it owes a reader and what it excuses. Events
 * are fed in the order they happen, so their System.nanoTime stamps are in that order.
 */
class DeliveryTest {
  private final SelectorLoop loop = new SelectorLoop("delivery-test", 1000, () -> {});
  private final Participant writer = participant("t/writer");
  private final Participant reader = participant("t/reader");
  private final Participant late = participant("t/late");
  private final Traffic.Topic topic = new Traffic.Topic("t", writer);

  @AfterEach
  void stop() {
    loop.close();
  }

  @Test
  void aMessageOfAnotherTopicOrNotAWritersIsForeignAndNotCountedAsReceived() {
    everyoneConnected();
    send(0, reader, late);
    reader.onMessage(true, "u 1".getBytes(StandardCharsets.UTF_8)); // another topic's
    late.onMessage(false, new byte[] {(byte) 0xDB, (byte) 0xDB, 't', ' ', '1'}); // overwritten bytes
    reader.onMessage(true, "t 1x".getBytes(StandardCharsets.UTF_8));
    Delivery.Summary summary = analyse();
    assertEquals(3, summary.foreign(), "foreign: " + summary.problems());
    assertEquals(0, summary.framesLostOutsideWindow());
    assertEquals(1, reader.received().size(), "only the topic's own message counts as received");
  }

  @Test
  void aFrameSentOnTheOldNodeAfterTheClaimIsNotOwedToTheNewNodesReaders() {
    topic.readers.add(reader);
    writer.onOpen(1);
    reader.onOpen(1);
    send(0, reader);
    topic.readers.add(late);
    late.onOpen(1); // lands on the new owner and claims the topic
    send(1, reader); // the writer is still on the old node, with the first reader
    writer.onClose(CloseCodes.TOPIC_MOVED, "moved");
    reader.onClose(CloseCodes.TOPIC_MOVED, "moved");
    writer.onOpen(2);
    reader.onOpen(2);
    send(2, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(0, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
    assertEquals(List.of(), summary.leftDisconnected());
  }

  @Test
  void aFrameMissedWhileEveryoneStayedConnectedIsLost() {
    everyoneConnected();
    send(0, reader, late);
    send(1, reader);
    send(2, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(1, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
  }

  @Test
  void aCloseForAnotherReasonExcusesOnlyFramesFromItsClose() {
    everyoneConnected();
    send(0, reader, late);
    reader.onClose(1001, "going away");
    reader.onOpen(2);
    send(1, reader); // late was connected throughout and no window covers this frame
    Await.pause(100); // pacing: the writer's close comes longer after it than any frame took
    writer.onClose(1001, "going away");
    writer.onOpen(2);
    send(2, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(1, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
  }

  @Test
  void framesSentBeforeACloseAreExcusedForAsLongAsFramesThenTookToArriveAndNoLonger() {
    everyoneConnected();
    Await.pause(900); // pacing: the frames below were sent while everyone was connected
    long now = System.nanoTime();
    topic.recordSent(0, now - TimeUnit.MILLISECONDS.toNanos(800)); // lost before the server closed
    topic.recordSent(1, now - TimeUnit.MILLISECONDS.toNanos(500));
    for (Participant r : List.of(reader, late)) {
      r.onMessage(true, "t 1".getBytes(StandardCharsets.UTF_8)); // took 500 ms: the clients are busy
    }
    topic.recordSent(2, now - TimeUnit.MILLISECONDS.toNanos(300)); // on its way when the server closed
    closeAndReopenEveryone();
    send(3, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(2, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
    assertTrue(summary.problems().stream().allMatch(p -> p.contains(" never received 0 ")), () -> String.join("\n", summary.problems()));
  }

  @Test
  void theTailOfFramesAReaderMissedBeforeTheServerClosedItIsExcusedWithoutASlowFrameAndAGapIsNot() {
    everyoneConnected();
    send(0, reader, late);
    send(1, late); // the reader misses it and gets the next: a gap, not a close's doing
    send(2, reader, late);
    send(3); // on their way when the server closed everyone
    send(4);
    Await.pause(100); // pacing: the clients see the close longer after them than any frame took
    closeAndReopenEveryone();
    send(5, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(1, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
    assertTrue(summary.problems().get(0).startsWith("t/reader never received 1 "), () -> String.join("\n", summary.problems()));
    assertTrue(summary.longestTailBeforeCloseMillis() >= 100, "frame 3 went at least 100 ms before the close: " + summary.longestTailBeforeCloseMillis());
  }

  @Test
  void whatEveryReaderMissedBeforeTheServerClosedTheWriterIsExcused() {
    everyoneConnected();
    send(0, reader, late);
    send(1); // the server discards what the writer sends once it is closing it
    Await.pause(100); // pacing: the writer sees its close longer after it than any frame took
    writerClosedAndBack(CloseCodes.TOKEN_EXPIRED);
    send(2, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(0, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
  }

  @Test
  void aReaderThatJoinedAfterAFrameAndGotALaterOneShowsTheWritersCloseDiscardedNeither() {
    topic.readers.add(reader);
    writer.onOpen(1);
    reader.onOpen(1);
    send(0, reader);
    send(1); // the reader misses it
    topic.readers.add(late);
    late.onOpen(1);
    send(2, late); // and this one, which a reader that came later got: the relay was relaying
    Await.pause(100); // pacing: the writer sees its close longer after them than any frame took
    writerClosedAndBack(CloseCodes.TOKEN_EXPIRED);
    send(3, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(2, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
  }

  @Test
  void aTailBeforeACloseTheServerDidNotPlanIsNotExcused() {
    everyoneConnected();
    send(0, reader, late);
    send(1);
    Await.pause(100); // pacing: the clients see the close longer after it than any frame took
    closeAndReopenEveryone(CloseCodes.INTERNAL_ERROR); // a fault: what it lost is counted
    send(2, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(2, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
  }

  @Test
  void howeverLongFramesTookAtMostASecondBeforeACloseIsExcused() {
    everyoneConnected();
    Await.pause(1_500); // pacing: the frames below were sent while everyone was connected
    long now = System.nanoTime();
    topic.recordSent(0, now - TimeUnit.MILLISECONDS.toNanos(1_400));
    for (Participant r : List.of(reader, late)) {
      r.onMessage(true, "t 0".getBytes(StandardCharsets.UTF_8)); // took 1.4 s: waited in a queue
    }
    topic.recordSent(1, now - TimeUnit.MILLISECONDS.toNanos(1_200)); // lost more than a second before the close
    closeAndReopenEveryone();
    send(2, reader, late);

    Delivery.Summary summary = analyse();

    assertEquals(2, summary.framesLostOutsideWindow(), () -> String.join("\n", summary.problems()));
  }

  /** The server closes everyone's connection with 1001, and everyone reconnects. */
  private void closeAndReopenEveryone() {
    closeAndReopenEveryone(CloseCodes.GOING_AWAY);
  }

  /** The server closes everyone's connection with {@code code}, and everyone reconnects. */
  private void closeAndReopenEveryone(int code) {
    for (Participant p : topic.participants()) {
      p.onClose(code, "closed");
    }
    for (Participant p : topic.participants()) {
      p.onOpen(2);
    }
  }

  @Test
  void framesSentToAKilledNodeBeforeItsClientsNoticedAreExcusedOnlyWhenTheKillIsRecorded() {
    everyoneConnected();
    send(0, reader, late);
    long killed = System.nanoTime();
    send(1); // reaches the dead node; its clients have not seen their connections end yet
    Await.pause(100); // pacing: they notice longer after it than any frame took
    Delivery.Summary unrecorded = crashAndReconnect();
    topic.crashed(killed);

    Delivery.Summary recorded = analyse();

    assertEquals(2, unrecorded.framesLostOutsideWindow(), () -> String.join("\n", unrecorded.problems()));
    assertEquals(0, recorded.framesLostOutsideWindow(), () -> String.join("\n", recorded.problems()));
  }

  /** Everyone sees the dead node's connection end and reconnects; analysed before the kill is recorded. */
  private Delivery.Summary crashAndReconnect() {
    writer.onClose(1006, "connection ended without a close frame");
    reader.onClose(1006, "connection ended without a close frame");
    late.onClose(1006, "connection ended without a close frame");
    writer.onOpen(2);
    reader.onOpen(2);
    late.onOpen(2);
    send(2, reader, late);
    return analyse();
  }

  /** The server closes the writer's connection with {@code code}, and the writer reconnects. */
  private void writerClosedAndBack(int code) {
    writer.onClose(code, "closed");
    writer.onOpen(2);
  }

  /** The writer and both readers connect, all to the same node. */
  private void everyoneConnected() {
    topic.readers.add(reader);
    topic.readers.add(late);
    writer.onOpen(1);
    reader.onOpen(1);
    late.onOpen(1);
  }

  private Delivery.Summary analyse() {
    return Delivery.analyse(List.of(topic), Duration.ZERO, System.nanoTime());
  }

  /** The writer sends frame {@code seq}, and {@code receivers} get it. */
  private void send(long seq, Participant... receivers) {
    topic.recordSent(seq, System.nanoTime());
    for (Participant r : receivers) {
      r.onMessage(true, ("t " + seq).getBytes(StandardCharsets.UTF_8));
    }
  }

  private Participant participant(String name) {
    return new Participant(name, loop, "http://127.0.0.1:1", null, "t", "token");
  }
}
