package io.relay.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.relay.ws.WsFrames;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Each fault the checks exist for, made on purpose, is caught: a frame let go of more often than
 * it was held, a frame written after its last holder let go, and a pooled buffer never released
 * (found by Netty's leak detector once the garbage collector has taken it).
 */
class BufferChecksTest {
  @AfterEach
  void forgetTheFaultsMadeOnPurpose() {
    BufferChecks.clear();
  }

  private static WsFrames.Frame message() {
    return WsFrames.message(ByteBufAllocator.DEFAULT, WsFrames.BINARY, new byte[100], 0, 100);
  }

  @Test
  void aFrameLetGoOfTwiceIsAFault() {
    long before = BufferChecks.count();
    WsFrames.Frame frame = message();
    frame.release();
    assertThrows(IllegalStateException.class, frame::release);
    assertEquals(before + 1, BufferChecks.count(), "counted");
    assertTrue(BufferChecks.faults().get(0).getMessage().contains("more often than it was held"));
  }

  @Test
  void aFrameWrittenAfterItsLastHolderLetGoIsAFault() {
    WsFrames.Frame frame = message();
    frame.release();
    assertThrows(IllegalStateException.class, frame::forWrite);
    assertTrue(BufferChecks.faults().get(0).getMessage().contains("after its last holder let go"));
  }

  @Test
  void aBufferNeverReleasedIsAFaultOnceCollected() {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (BufferChecks.faults().stream().noneMatch(f -> f.getMessage().contains("never released"))) {
      assertTrue(System.nanoTime() < deadline, "the leak detector reported no leak within 20 s");
      leak();
      System.gc();
      // the detector reports leaks it found when the next buffer is allocated
      ByteBuf next = ByteBufAllocator.DEFAULT.directBuffer(16);
      next.release();
    }
    List<IllegalStateException> faults = BufferChecks.faults();
    assertTrue(faults.get(0).getMessage().contains("ByteBuf"), faults.get(0).getMessage());
  }

  private static void leak() {
    ByteBufAllocator.DEFAULT.directBuffer(64).writeLong(42);
  }
}
