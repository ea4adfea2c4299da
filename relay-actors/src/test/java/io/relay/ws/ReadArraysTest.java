package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.ws.WsFrames.Frame;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** The arrays of large socket reads, and their return by the frames relayed from them. */
class ReadArraysTest {
  @Test
  void aReadShorterThanThePooledSizesGetsAnArrayOfExactlyItsLength() {
    assertEquals(100, ReadArrays.take(100).length);
    assertEquals(ReadArrays.MIN_BYTES - 1, ReadArrays.take(ReadArrays.MIN_BYTES - 1).length);
    assertEquals(ReadArrays.MAX_BYTES + 1, ReadArrays.take(ReadArrays.MAX_BYTES + 1).length);
  }

  @Test
  void aLargeReadGetsAnArrayOfItsSizeClassAtMostAStepLonger() {
    byte[] array = ReadArrays.take(65_550);
    assertTrue(array.length >= 65_550 && array.length < 65_550 + ReadArrays.STEP, "length " + array.length);
    assertEquals(0, array.length % ReadArrays.STEP);
  }

  @Test
  void aReadOfAWholeNumberOfStepsGetsAnArrayOfItsLengthThatGoesBackToThePool() {
    byte[] array = ReadArrays.take(16 * ReadArrays.STEP);
    assertEquals(16 * ReadArrays.STEP, array.length);
    ReadArrays.giveBack(array);
    assertSame(array, ReadArrays.take(16 * ReadArrays.STEP));
  }

  @Test
  void anArrayGivenBackIsTakenByTheNextReadOfItsSizeClass() {
    byte[] array = ReadArrays.take(40_000);
    ReadArrays.giveBack(array);
    long reused = ReadArrays.reused();
    assertSame(array, ReadArrays.take(40_000 - 100), "a shorter read of the same class takes it");
    assertEquals(reused + 1, ReadArrays.reused());
    assertNotSame(array, ReadArrays.take(40_000), "an array is taken once");
  }

  @Test
  void anArrayOfALengthThePoolDoesNotMakeIsNotKept() {
    long pooled = ReadArrays.pooledBytes();
    ReadArrays.giveBack(new byte[40_001]);
    ReadArrays.giveBack(new byte[1024]);
    assertEquals(pooled, ReadArrays.pooledBytes());
  }

  @Test
  void aSizeClassKeepsUpToItsBoundWhileThePoolHasRoomAndTheArraysPastItAreLeft() {
    int length = ReadArrays.MAX_BYTES;
    int bound = ReadArrays.MAX_CLASS_BYTES / length;
    long pooled = ReadArrays.pooledBytes();
    giveBackNew(length, bound + 3);
    assertEquals(pooled + (long) bound * length, ReadArrays.pooledBytes(), "the class keeps " + bound + " arrays");
    // another class is not kept out by the full one
    byte[] other = ReadArrays.take(20_000);
    ReadArrays.giveBack(other);
    assertSame(other, ReadArrays.take(20_000));
    takeAll(length, bound); // empties the class again for the other tests
    assertEquals(pooled, ReadArrays.pooledBytes());
  }

  @Test
  void onceThePoolHoldsItsSharedBytesEachClassKeepsOnlyItsShare() {
    long pooled = ReadArrays.pooledBytes();
    List<int[]> filled = new ArrayList<>(); // {length, arrays kept} of each class given its bound
    for (int length = ReadArrays.MAX_BYTES; ReadArrays.pooledBytes() < ReadArrays.SHARED_BYTES; length -= ReadArrays.STEP) {
      long before = ReadArrays.pooledBytes();
      giveBackNew(length, ReadArrays.MAX_CLASS_BYTES / length);
      filled.add(new int[] {length, (int) ((ReadArrays.pooledBytes() - before) / length)});
    }
    int length = 20 * 1024;
    int share = ReadArrays.CLASS_SHARE_BYTES / length;
    long before = ReadArrays.pooledBytes();
    giveBackNew(length, share + 5);
    assertEquals(before + (long) share * length, ReadArrays.pooledBytes(), "past the shared bytes, a class keeps its share of " + share + " arrays");
    takeAll(length, share);
    filled.forEach(f -> takeAll(f[0], f[1]));
    assertEquals(pooled, ReadArrays.pooledBytes());
  }

  /** Takes {@code count} arrays of {@code length}, the pool having none of theirs, and gives them back. */
  private static void giveBackNew(int length, int count) {
    List<byte[]> arrays = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      arrays.add(ReadArrays.take(length));
    }
    arrays.forEach(ReadArrays::giveBack);
  }

  /** Takes {@code count} arrays of {@code length} out of the pool, asserting it had them. */
  private static void takeAll(int length, int count) {
    long reused = ReadArrays.reused();
    for (int i = 0; i < count; i++) {
      ReadArrays.take(length);
    }
    assertEquals(reused + count, ReadArrays.reused(), count + " arrays of " + length + " bytes were in the pool");
  }

  /** A frame relayed from the array its message was read into, as the connection makes it. */
  @Nested
  class FramesInReadArrays {
    private final MemoryBudget budget = new MemoryBudget(1 << 30, (holder, held) -> {});
    /** The array a 30,000-byte message was read into. */
    private final byte[] array = ReadArrays.take(30_014);

    /** The message's frame in {@link #array}, held by the stage reading it and offered to {@code readers}. */
    private Frame sharedWith(int readers) {
      Frame frame = WsFrames.frame(WsFrames.BINARY, array, 14, 30_000);
      frame.inReadArray(array);
      frame.share(budget, readers);
      return frame;
    }

    @Test
    void theArrayGoesBackOnceEveryReaderAndTheReadingStageHaveLetGo() {
      Frame frame = sharedWith(2);
      long pooled = ReadArrays.pooledBytes();
      frame.release();
      frame.release();
      assertEquals(pooled, ReadArrays.pooledBytes(), "the stage still reads the rest of the read in it");
      assertEquals(30_000, budget.used());
      frame.release();
      assertEquals(pooled + array.length, ReadArrays.pooledBytes());
      assertSame(array, ReadArrays.take(30_014));
      assertEquals(0, budget.used());
    }

    @Test
    void aStageDoneWithItsReadBeforeTheReadersLeavesTheArrayToTheLastReader() {
      Frame frame = sharedWith(1);
      long pooled = ReadArrays.pooledBytes();
      frame.release();
      assertEquals(pooled, ReadArrays.pooledBytes(), "the reader still holds it");
      frame.release();
      assertSame(array, ReadArrays.take(30_014));
    }

    @Test
    void whatIsLeftOfAPartlyWrittenFrameGivesTheWholeArrayBack() {
      Frame frame = sharedWith(1);
      frame.release();
      frame.rest(1000).release();
      assertSame(array, ReadArrays.take(30_014));
    }

    @Test
    void aFrameOneHolderAbandonedLeavesItsArrayToTheGarbageCollector() {
      Frame frame = sharedWith(2);
      long pooled = ReadArrays.pooledBytes();
      frame.rest(10).abandon();
      frame.release();
      frame.release();
      assertEquals(pooled, ReadArrays.pooledBytes(), "a socket may still be writing its bytes");
      assertEquals(0, budget.used(), "the budget gets its bytes back all the same");
    }

    @Test
    void aFrameOfferedToNobodyGivesItsArrayBackWhenTheStageIsDoneWithTheRead() {
      Frame frame = sharedWith(0);
      frame.release();
      assertSame(array, ReadArrays.take(30_014));
      assertEquals(0, budget.used());
    }
  }

  /** The checks every test runs with ({@link BufferChecks#ON}), each fault made on purpose. */
  @Nested
  class Checks {
    private final MemoryBudget budget = new MemoryBudget(1 << 30, (holder, held) -> {});

    @BeforeEach
    void checksAreOn() {
      assertTrue(BufferChecks.ON, "tests run with -D" + BufferChecks.PROPERTY + "=true");
    }

    @AfterEach
    void forgetTheFaultsMadeOnPurpose() {
      BufferChecks.clear();
    }

    @Test
    void anArrayGivenBackIsPoisoned() {
      byte[] array = ReadArrays.take(20_000);
      Arrays.fill(array, (byte) 7);
      ReadArrays.giveBack(array);
      for (byte b : array) {
        assertEquals(BufferChecks.POISON, b);
      }
    }

    @Test
    void anArrayGivenBackTwiceIsAFault() {
      byte[] array = ReadArrays.take(20_000);
      ReadArrays.giveBack(array);
      long faults = BufferChecks.count();
      IllegalStateException fault = assertThrows(IllegalStateException.class, () -> ReadArrays.giveBack(array));
      assertTrue(fault.getMessage().contains("twice"), fault.getMessage());
      assertEquals(faults + 1, BufferChecks.count());
      assertEquals(1, BufferChecks.faults().size());
    }

    @Test
    void anArrayWrittenAfterItWasGivenBackIsAFaultWhenTakenAgain() {
      byte[] array = ReadArrays.take(24 * 1024);
      ReadArrays.giveBack(array);
      array[5000] = 1; // a late write by whoever gave it back
      IllegalStateException fault = assertThrows(IllegalStateException.class, () -> ReadArrays.take(24 * 1024));
      assertTrue(fault.getMessage().contains("byte 5000"), fault.getMessage());
    }

    @Test
    void aFrameLetGoOfOnceMoreThanHeldIsAFaultNamingTheHolderBefore() {
      Frame frame = WsFrames.frame(WsFrames.BINARY, ByteString.fromArray(new byte[100]));
      frame.share(budget, 2);
      frame.release();
      frame.release();
      IllegalStateException fault = assertThrows(IllegalStateException.class, frame::release);
      assertTrue(fault.getMessage().contains("more often than it was held"), fault.getMessage());
      assertNotNull(fault.getCause(), "the previous holder's release is the cause");
      assertTrue(
          Arrays.stream(fault.getCause().getStackTrace()).anyMatch(e -> e.getMethodName().contains("LetGoOfOnceMore")),
          "the cause's stack is that release's");
      assertEquals(0, budget.used(), "the budget was given the payload back once");
    }

    @Test
    void aFramesBytesAskedForAfterItsLastHolderLetGoAreAFault() {
      Frame frame = WsFrames.frame(WsFrames.BINARY, ByteString.fromArray(new byte[100]));
      frame.share(budget, 1);
      frame.wire();
      frame.release();
      assertThrows(IllegalStateException.class, frame::wire);
      assertThrows(IllegalStateException.class, () -> frame.rest(10).wire());
    }

    @Test
    void aFramesBytesChangedWhileItIsHeldAreAFaultAtTheNextWrite() {
      byte[] array = ReadArrays.take(20_014);
      Frame frame = WsFrames.frame(WsFrames.BINARY, array, 14, 20_000);
      frame.inReadArray(array);
      frame.share(budget, 2);
      frame.wire(); // the first reader's write
      array[5000] ^= 1; // the array read into again while the frame still holds it
      IllegalStateException fault = assertThrows(IllegalStateException.class, frame::wire);
      assertTrue(fault.getMessage().contains("changed while it was held"), fault.getMessage());
    }

    @Test
    void controlFramesAreNotCounted() {
      Frame ping = WsFrames.frame(WsFrames.PING, ByteString.emptyByteString());
      ping.release();
      ping.release();
      ping.wire();
      assertTrue(BufferChecks.faults().isEmpty());
    }
  }
}
