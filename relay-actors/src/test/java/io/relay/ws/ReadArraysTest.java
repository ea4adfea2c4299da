package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.ws.WsFrames.Frame;
import java.util.ArrayList;
import java.util.List;
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

    /** The message's frame in {@link #array}, offered to {@code holders} readers. */
    private Frame sharedWith(int holders) {
      Frame frame = WsFrames.frame(WsFrames.BINARY, array, 14, 30_000);
      frame.reuseWhenReleased(array);
      frame.share(budget, holders);
      return frame;
    }

    @Test
    void theArrayGoesBackWhenTheLastHolderReleasesTheFrame() {
      Frame frame = sharedWith(2);
      long pooled = ReadArrays.pooledBytes();
      frame.release();
      assertEquals(pooled, ReadArrays.pooledBytes(), "one reader still holds it");
      frame.release();
      assertEquals(pooled + array.length, ReadArrays.pooledBytes());
      assertSame(array, ReadArrays.take(30_014));
      assertEquals(0, budget.used());
    }

    @Test
    void whatIsLeftOfAPartlyWrittenFrameGivesTheWholeArrayBack() {
      sharedWith(1).rest(1000).release();
      assertSame(array, ReadArrays.take(30_014));
    }

    @Test
    void aFrameOneHolderAbandonedLeavesItsArrayToTheGarbageCollector() {
      Frame frame = sharedWith(2);
      long pooled = ReadArrays.pooledBytes();
      frame.rest(10).abandon();
      frame.release();
      assertEquals(pooled, ReadArrays.pooledBytes(), "a socket may still be writing its bytes");
      assertEquals(0, budget.used(), "the budget gets its bytes back all the same");
    }

    @Test
    void aFrameOfferedToNobodyKeepsItsArray() {
      Frame frame = sharedWith(0);
      long pooled = ReadArrays.pooledBytes();
      frame.release();
      assertEquals(pooled, ReadArrays.pooledBytes());
    }
  }
}
