package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.prometheus.metrics.core.metrics.Counter;
import io.relay.memory.MemoryBudget;
import io.relay.ws.CloseCodes;
import io.relay.ws.WsFrames.Frame;
import io.relay.ws.WsFrames;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The outbound queue stays within its bounds by dropping the oldest frames, and counts them. */
class OutboundQueueTest {
  private static OutboundQueue queue(int maxMessages, long maxBytes) {
    return new OutboundQueue(maxMessages, maxBytes, Counter.builder().name("discarded").build());
  }

  private static Frame frame(int size) {
    return WsFrames.frame(WsFrames.BINARY, ByteString.fromArray(new byte[size]));
  }

  @Test
  void dropsTheOldestPastTheMessageBound() {
    OutboundQueue queue = queue(3, 1 << 20);
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
    OutboundQueue queue = queue(100, 1000);
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
    OutboundQueue queue = queue(10, 1 << 20);
    queue.offer(frame(1));
    queue.close(CloseCodes.BOOKING_DENIED, "denied", false);
    queue.offer(frame(1));
    assertClose(CloseCodes.BOOKING_DENIED, queue.poll());
    assertNull(queue.poll(), "nothing is sent after the close frame");
  }

  @Test
  void gracefulCloseSendsWhatIsQueuedFirst() {
    OutboundQueue queue = queue(10, 1 << 20);
    Frame queued = frame(1);
    queue.offer(queued);
    queue.close(CloseCodes.TOPIC_MOVED, "moved", true);
    queue.offer(frame(1));
    assertSame(queued, queue.poll(), "the frame queued before the close goes first");
    assertClose(CloseCodes.TOPIC_MOVED, queue.poll());
    assertNull(queue.poll(), "nothing offered after the close is sent");
  }

  @Test
  void aGracefulCloseGivenUpDropsWhatIsQueuedCountedAndTheCloseGoesNext() {
    OutboundQueue queue = drainingWithTwoQueued();
    assertEquals(2, queue.discardPending(), "the two frames not sent within the close timeout");
    assertEquals(2, queue.dropped(), "counted as dropped");
    assertClose(CloseCodes.GOING_AWAY, queue.poll());
    assertNull(queue.poll());
  }

  @Test
  void whatACloseLetsGoIsCountedAsDiscardedAndNotAsDropped() {
    Counter discarded = Counter.builder().name("discarded").build();
    OutboundQueue denied = twoQueued(discarded);
    denied.close(CloseCodes.BOOKING_DENIED, "denied", false);
    assertEquals(2, discarded.getLongValue(), "a close at once lets what is queued go");
    denied.offer(frame(1));
    assertEquals(3, discarded.getLongValue(), "and what is offered after it");
    assertClose(CloseCodes.BOOKING_DENIED, denied.poll());
    denied.offer(frame(1));
    assertEquals(4, discarded.getLongValue(), "and after its close frame went");

    OutboundQueue draining = twoQueued(discarded);
    draining.close(CloseCodes.GOING_AWAY, "draining", true);
    assertEquals(4, discarded.getLongValue(), "a graceful close keeps what is queued");
    draining.offer(frame(1));
    assertEquals(5, discarded.getLongValue(), "but takes nothing more");
    assertTrue(draining.poll().opcode() == WsFrames.BINARY, "the first queued frame goes");
    draining.dispose();
    assertEquals(6, discarded.getLongValue(), "the connection ended with one frame still queued");
    assertEquals(0, denied.dropped() + draining.dropped(), "none of it is a drop");
  }

  @Test
  void aGracefulCloseThatStopsFlushingGoesNextWithItsCodeAndDiscardsWhatWasQueued() {
    Counter discarded = Counter.builder().name("discarded").build();
    OutboundQueue draining = twoQueued(discarded);
    draining.close(CloseCodes.GOING_AWAY, "draining", true);
    draining.stopFlushing();
    assertClose(CloseCodes.GOING_AWAY, draining.poll());
    assertNull(draining.poll(), "nothing after the close");
    assertEquals(2, discarded.getLongValue(), "the two queued frames, discarded");
    assertEquals(0, draining.dropped(), "and not dropped");

    OutboundQueue open = twoQueued(discarded);
    open.stopFlushing();
    assertEquals(2, open.size(), "without a graceful close nothing is let go");
    assertEquals(2, discarded.getLongValue());
    open.dispose();
  }

  /** A queue counting its discards in {@code discarded}, two frames queued. */
  private static OutboundQueue twoQueued(Counter discarded) {
    OutboundQueue queue = new OutboundQueue(10, 1 << 20, discarded);
    queue.offer(frame(1));
    queue.offer(frame(1));
    return queue;
  }

  @Test
  void aCloseAtOnceOvertakesAGracefulOneStillDeliveringAndOnlyThat() {
    OutboundQueue draining = drainingWithTwoQueued();
    draining.close(CloseCodes.TOPIC_MOVED, "moved", true);
    assertEquals(CloseCodes.GOING_AWAY, draining.closeCode(), "a graceful close does not overtake another");
    draining.close(CloseCodes.BOOKING_DENIED, "denied", false);
    assertEquals(CloseCodes.BOOKING_DENIED, draining.closeCode());
    assertClose(CloseCodes.BOOKING_DENIED, draining.poll()); // the denied reader gets no more of what the drain was flushing
    assertNull(draining.poll());
    assertEquals(0, draining.dropped(), "a close at once discards, as it does on its own, without counting drops");

    OutboundQueue denied = queue(10, 1 << 20);
    denied.close(CloseCodes.BOOKING_DENIED, "denied", false);
    denied.close(CloseCodes.GOING_AWAY, "draining", true);
    denied.close(CloseCodes.PROTOCOL_ERROR, "protocol error", false);
    assertEquals(CloseCodes.BOOKING_DENIED, denied.closeCode(), "the first close at once wins");
    assertClose(CloseCodes.BOOKING_DENIED, denied.poll());

    OutboundQueue sent = queue(10, 1 << 20);
    sent.close(CloseCodes.GOING_AWAY, "draining", true);
    assertClose(CloseCodes.GOING_AWAY, sent.poll());
    sent.close(CloseCodes.BOOKING_DENIED, "denied", false);
    assertEquals(CloseCodes.GOING_AWAY, sent.closeCode(), "a close frame already sent is not overtaken");
    assertNull(sent.poll());
  }

  /** A queue of two frames asked to close gracefully (1001), the frames not sent yet. */
  private static OutboundQueue drainingWithTwoQueued() {
    OutboundQueue queue = queue(10, 1 << 20);
    queue.offer(frame(1));
    queue.offer(frame(1));
    queue.close(CloseCodes.GOING_AWAY, "draining", true);
    return queue;
  }

  /** {@code frame} is a close frame with {@code code}. */
  private static void assertClose(int code, Frame frame) {
    assertTrue(frame != null && frame.opcode() == WsFrames.CLOSE, "a close frame");
    assertEquals(code, frame.payload().getUnsignedShort(0), "its code");
  }

  @Test
  void aCloseAlwaysWakesTheDrainSide() {
    OutboundQueue queue = queue(10, 1 << 20);
    AtomicInteger wakeups = new AtomicInteger();
    queue.attach(wakeups::incrementAndGet);
    queue.offer(frame(1));
    queue.close(CloseCodes.GOING_AWAY, "draining", true);
    assertEquals(2, wakeups.get(), "woken for the close even though frames were already pending");
  }

  @Test
  void aQueueDisposedBeforeTheDrainSideAttachesRefusesItAndOneDisposedAfterWakesIt() {
    OutboundQueue dropped = queue(10, 1 << 20);
    AtomicInteger wakeups = new AtomicInteger();
    dropped.dispose();
    assertFalse(dropped.attach(wakeups::incrementAndGet), "a queue its topic disposed takes no drain side");
    dropped.offer(frame(1));
    assertEquals(0, wakeups.get());
    assertNull(dropped.poll(), "and queues nothing");

    OutboundQueue attached = queue(10, 1 << 20);
    assertTrue(attached.attach(wakeups::incrementAndGet));
    assertFalse(attached.isDisposed());
    attached.dispose();
    assertEquals(1, wakeups.get(), "the drain side is woken to find the queue disposed");
    assertTrue(attached.isDisposed());
  }

  @Test
  void wakesTheDrainSideOnlyWhenItWaitsOnAnEmptyQueue() {
    OutboundQueue queue = queue(10, 1 << 20);
    AtomicInteger wakeups = new AtomicInteger();
    queue.attach(wakeups::incrementAndGet);
    queue.offer(frame(1));
    queue.offer(frame(1));
    assertEquals(1, wakeups.get(), "one wake-up for a burst");
    queue.poll();
    queue.poll();
    assertNull(queue.poll());
    queue.offer(frame(1));
    assertEquals(2, wakeups.get(), "woken again after it found the queue empty");
  }

  /** The queue holds each relayed frame for the memory budget and lets go of it exactly once. */
  @Nested
  class Holders {
    private final MemoryBudget budget = new MemoryBudget(1 << 20, (connections, bytes) -> {});

    /** A client's message as a writer's channel makes it, offered to one reader. */
    private Frame sharedWithOne(int size) {
      Frame frame = WsFrames.message(UnpooledByteBufAllocator.DEFAULT, WsFrames.BINARY, new byte[size], 0, size);
      frame.share(budget, 1);
      frame.release(); // the maker lets go once it has offered it
      return frame;
    }

    @Test
    void aDroppedFrameLeavesTheBudgetAndItsBufferIsFreed() {
      OutboundQueue queue = queue(1, 1 << 20);
      Frame first = sharedWithOne(100);
      ByteBuf firstBytes = first.forWrite();
      firstBytes.release();
      queue.offer(first);
      assertEquals(100, budget.used());
      queue.offer(sharedWithOne(200));
      assertEquals(200, budget.used(), "the dropped frame's payload left the budget");
      assertEquals(0, firstBytes.refCnt(), "and its buffer went back");
      queue.dispose();
    }

    @Test
    void aFrameHandedOutIsHeldUntilItsWriteEnds() {
      OutboundQueue queue = queue(10, 1 << 20);
      queue.offer(sharedWithOne(100));
      Frame polled = queue.poll();
      assertEquals(100, budget.used(), "the channel holds it now");
      ByteBuf wire = polled.forWrite();
      polled.operationComplete(null);
      assertEquals(0, budget.used(), "its write ended: the budget is free");
      assertEquals(1, wire.refCnt(), "the channel's own duplicate still holds the bytes it writes");
      wire.release();
      assertEquals(0, wire.refCnt());
    }

    @Test
    void disposingReleasesWhatIsQueued() {
      OutboundQueue queue = queue(10, 1 << 20);
      queue.offer(sharedWithOne(100));
      queue.offer(sharedWithOne(50));
      queue.dispose();
      assertEquals(0, budget.used());
      queue.offer(sharedWithOne(10));
      assertEquals(0, budget.used(), "an offer after the end is released at once");
    }
  }
}
