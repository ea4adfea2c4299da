package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.ws.WsFrames.Frame;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The outbound queue stays within its bounds by dropping the oldest frames, and counts them. */
class OutboundQueueTest {
  private static Frame frame(int size) {
    return WsFrames.frame(WsFrames.BINARY, ByteString.fromArray(new byte[size]));
  }

  @Test
  void dropsTheOldestPastTheMessageBound() {
    OutboundQueue queue = new OutboundQueue(3, 1 << 20);
    Frame[] frames = new Frame[5];
    for (int i = 0; i < 5; i++) {
      frames[i] = frame(10);
      queue.offer(frames[i]);
    }
    assertEquals(3, queue.size());
    assertEquals(2, queue.dropped());
    assertSame(frames[2], queue.poll(), "the oldest two were dropped");
    assertSame(frames[3], queue.poll());
    assertSame(frames[4], queue.poll());
    assertNull(queue.poll());
  }

  @Test
  void dropsTheOldestPastTheByteBoundButKeepsTheNewest() {
    OutboundQueue queue = new OutboundQueue(100, 1000);
    queue.offer(frame(400));
    queue.offer(frame(400));
    queue.offer(frame(400));
    assertEquals(2, queue.size(), "800 bytes fit, 1200 do not");
    Frame huge = frame(5000);
    queue.offer(huge);
    assertEquals(1, queue.size(), "a frame larger than the bound replaces everything");
    assertSame(huge, queue.poll());
    assertEquals(3, queue.dropped());
  }

  @Test
  void closeDiscardsQueuedFramesAndIsDeliveredNext() {
    OutboundQueue queue = new OutboundQueue(10, 1 << 20);
    queue.offer(frame(1));
    Frame close = WsFrames.close(CloseCodes.BOOKING_DENIED, "denied");
    queue.close(close, false);
    queue.offer(frame(1));
    assertSame(close, queue.poll());
    assertNull(queue.poll(), "nothing is sent after the close frame");
  }

  @Test
  void gracefulCloseSendsWhatIsQueuedFirst() {
    OutboundQueue queue = new OutboundQueue(10, 1 << 20);
    Frame queued = frame(1);
    queue.offer(queued);
    Frame close = WsFrames.close(CloseCodes.TOPIC_MOVED, "moved");
    queue.close(close, true);
    queue.offer(frame(1));
    assertSame(queued, queue.poll(), "the frame queued before the close goes first");
    assertSame(close, queue.poll());
    assertNull(queue.poll(), "nothing offered after the close is sent");
  }

  @Test
  void aCloseAlwaysWakesTheDrainSide() {
    OutboundQueue queue = new OutboundQueue(10, 1 << 20);
    AtomicInteger wakeups = new AtomicInteger();
    queue.attach(wakeups::incrementAndGet, null);
    queue.offer(frame(1));
    queue.close(WsFrames.close(CloseCodes.GOING_AWAY, "draining"), true);
    assertEquals(2, wakeups.get(), "woken for the close even though frames were already pending");
  }

  @Test
  void wakesTheDrainSideOnlyWhenItWaitsOnAnEmptyQueue() {
    OutboundQueue queue = new OutboundQueue(10, 1 << 20);
    AtomicInteger wakeups = new AtomicInteger();
    queue.attach(wakeups::incrementAndGet, null);
    queue.offer(frame(1));
    queue.offer(frame(1));
    assertEquals(1, wakeups.get(), "one wake-up for a burst");
    queue.poll();
    queue.poll();
    assertNull(queue.poll());
    queue.offer(frame(1));
    assertEquals(2, wakeups.get(), "woken again after it found the queue empty");
  }

  /**
   * A reader idle on an empty queue is written by the writer's own thread; the queue keeps one
   * writer at a time, what the socket did not take goes first, and the drain side never writes
   * while a writer does.
   */
  @Nested
  class DirectWrites {
    private final MemoryBudget budget = new MemoryBudget(1 << 20, (connections, bytes) -> {});
    private final List<ByteString> written = new CopyOnWriteArrayList<>();
    private final AtomicInteger wakeups = new AtomicInteger();
    private final OutboundQueue queue = new OutboundQueue(10, 1 << 20);
    /** Lets the write of {@link #startWriterThatWaitsInTheSink} finish. */
    private final CountDownLatch finish = new CountDownLatch(1);

    private Frame shared(int size) {
      Frame frame = frame(size);
      frame.share(budget, 1);
      return frame;
    }

    /** Attaches a sink that takes at most {@code takes} bytes of each frame (-1: fails). */
    private void attach(int takes) {
      queue.attach(
          wakeups::incrementAndGet,
          frame -> {
            int n = takes < 0 ? -1 : Math.min(takes, frame.wire().length());
            if (n > 0) {
              written.add(frame.wire().take(n));
            }
            return n;
          });
    }

    /**
     * Makes the drain side idle, with a sink taking at most {@code takes} bytes of each frame, and
     * offers it a frame of 100 bytes.
     */
    private Frame offerToAnIdleReader(int takes) {
      attach(takes);
      assertNull(queue.poll());
      Frame frame = shared(100);
      queue.offer(frame);
      return frame;
    }

    @Test
    void anIdleReaderIsWrittenByTheWriterWithoutAWakeUp() {
      attach(Integer.MAX_VALUE);
      Frame first = shared(100);
      queue.offer(first);
      assertEquals(List.of(), written, "not idle before its first poll finds nothing");
      assertEquals(1, wakeups.get());
      assertSame(first, queue.poll());
      first.release();
      assertNull(queue.poll());
      Frame second = shared(100);
      ByteString secondWire = second.wire(); // the frame is released once written
      queue.offer(second);
      assertEquals(List.of(secondWire), written, "written by the writer");
      assertEquals(1, wakeups.get(), "the drain side was not woken");
      assertEquals(0, queue.size());
      assertEquals(0, budget.used(), "a frame written whole is released");
      queue.offer(shared(100));
      assertEquals(2, written.size(), "still idle: the next is written directly too");
    }

    @Test
    void whatTheSocketDidNotTakeIsSentFirstEvenBeforeAClose() {
      Frame frame = offerToAnIdleReader(7);
      assertEquals(List.of(frame.wire().take(7)), written);
      assertEquals(1, wakeups.get(), "the drain side is woken for the rest");
      queue.offer(shared(10));
      queue.close(WsFrames.close(CloseCodes.BOOKING_DENIED, "denied"), false);
      Frame rest = queue.poll();
      assertTrue(rest.isRest());
      assertEquals(frame.wire().drop(7), rest.wire(), "the rest of the frame, not a new one");
      assertEquals(100, budget.used(), "the rest still holds the frame");
      rest.release();
      assertEquals(0, budget.used());
      assertTrue(queue.poll().isClose(), "then the close, which dropped what was queued");
    }

    @Test
    void theDrainSidesOwnFrameWaitsForTheRest() {
      Frame frame = offerToAnIdleReader(0);
      Frame rest = queue.takeOver();
      assertEquals(frame.wire(), rest.wire(), "a socket that took nothing leaves the whole frame to send first");
      assertNull(queue.takeOver(), "nothing left before the drain side's own frame");
      queue.offer(shared(100));
      assertEquals(List.of(), written, "not idle after taking over, until a poll finds nothing");
    }

    @Test
    void aFailedWriteLeavesTheFrameToTheDrainSide() {
      Frame frame = offerToAnIdleReader(-1);
      assertSame(frame, queue.poll(), "the drain side writes it and meets the failure");
    }

    @Test
    void aWriteUnderWayHoldsOffOtherWritersAndTheDrainSide() throws Exception {
      Frame first = shared(100);
      ByteString firstWire = first.wire(); // the frame is released once written
      Thread writer = startWriterThatWaitsInTheSink(first);
      Frame second = shared(100);
      queue.offer(second);
      assertEquals(1, queue.size(), "a second writer's frame is queued while the first writes");
      assertEquals(0, wakeups.get(), "and the drain side is not woken yet");
      AtomicReference<Frame> polled = new AtomicReference<>();
      Thread drain = new Thread(() -> polled.set(queue.poll()), "drain");
      drain.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (drain.getState() != Thread.State.WAITING) {
        assertTrue(drain.isAlive() && System.nanoTime() < deadline, "the drain side's poll did not wait for the writer");
        Thread.onSpinWait();
      }
      assertNull(polled.get());
      finish.countDown();
      writer.join(10_000);
      drain.join(10_000);
      assertFalse(drain.isAlive(), "the drain side's poll did not return once the write ended");
      assertEquals(List.of(firstWire), written);
      assertSame(second, polled.get(), "the queued frame goes to the drain side after the write");
    }

    @Test
    void aWriterWakesTheDrainSideForWhatWasQueuedDuringItsWrite() throws Exception {
      Thread writer = startWriterThatWaitsInTheSink(shared(100));
      queue.offer(shared(100));
      finish.countDown();
      writer.join(10_000);
      assertFalse(writer.isAlive(), "the writer did not finish");
      assertEquals(1, wakeups.get(), "woken once the write ended, for the queued frame");
    }

    @Test
    void aConnectionThatEndsDuringAWriteLeavesTheFrameToTheWriterWhichLetsGoOfItOnce() throws Exception {
      // the socket takes a part: had the connection lived, the rest would be queued
      Thread writer = startWriterThatWaitsInTheSink(shared(100), 10);
      queue.dispose(); // the connection ends (an abrupt close) while the writer writes its socket
      assertEquals(100, budget.used(), "the writer still holds the frame");
      finish.countDown();
      writer.join(10_000);
      assertFalse(writer.isAlive(), "the writer did not finish");
      assertEquals(0, budget.used(), "the writer let go of it, once (a second release is a fault)");
      assertEquals(0, queue.queuedBytes(), "no rest is kept for a connection that ended");
    }

    /**
     * Makes the drain side idle and starts a writer offering {@code frame}, whose write (taking
     * the whole frame) goes on only once {@link #finish} is counted down; returns once it writes.
     */
    private Thread startWriterThatWaitsInTheSink(Frame frame) {
      return startWriterThatWaitsInTheSink(frame, frame.wire().length());
    }

    /** As {@link #startWriterThatWaitsInTheSink(Frame)}, the socket taking {@code takes} bytes of the frame. */
    private Thread startWriterThatWaitsInTheSink(Frame frame, int takes) {
      CountDownLatch inSink = new CountDownLatch(1);
      queue.attach(
          wakeups::incrementAndGet,
          offered -> {
            inSink.countDown();
            await(finish, "the test to let the write finish");
            written.add(offered.wire().take(takes));
            return takes;
          });
      assertNull(queue.poll());
      Thread writer = new Thread(() -> queue.offer(frame), "writer");
      writer.start();
      await(inSink, "the writer to start writing");
      return writer;
    }

    private void await(CountDownLatch latch, String what) {
      try {
        assertTrue(latch.await(10, TimeUnit.SECONDS), "waited 10 s for " + what);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }
}
