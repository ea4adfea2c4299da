package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fast unmasker gives exactly what RFC 6455's byte-by-byte definition gives. */
class UnmaskerTest {
  private static byte[] reference(byte[] data, int mask, long offset) {
    byte[] out = data.clone();
    for (int i = 0; i < out.length; i++) {
      int keyByte = (int) ((offset + i) & 3);
      out[i] ^= (byte) (mask >>> (24 - 8 * keyByte));
    }
    return out;
  }

  @Test
  void matchesTheReferenceForRandomRangesAndOffsetsWithoutTouchingTheirNeighbours() {
    Random random = new Random(42);
    for (int n = 0; n < 20_000; n++) {
      byte[] data = new byte[random.nextInt(n < 19_000 ? 300 : 40_000)];
      random.nextBytes(data);
      int start = random.nextInt(data.length + 1);
      int end = start + random.nextInt(data.length - start + 1);
      int mask = random.nextInt();
      long offset = random.nextInt(1 << 20);
      byte[] bytes = data.clone();

      Unmasker.unmask(bytes, start, end - start, mask, offset);

      String which = "range " + start + ".." + end + " of " + data.length + ", offset " + offset;
      assertArrayEquals(reference(Arrays.copyOfRange(data, start, end), mask, offset), Arrays.copyOfRange(bytes, start, end), which);
      assertArrayEquals(Arrays.copyOfRange(data, 0, start), Arrays.copyOfRange(bytes, 0, start), "bytes before: " + which);
      assertArrayEquals(Arrays.copyOfRange(data, end, data.length), Arrays.copyOfRange(bytes, end, data.length), "bytes after: " + which);
    }
  }

  @Test
  void copyingUnmaskedMatchesTheReferenceForAnyOffsetAndLeavesTheSourceAsItWas() {
    Random random = new Random(3);
    for (int n = 0; n < 5_000; n++) {
      byte[] data = new byte[random.nextInt(n < 4_900 ? 300 : 70_000)];
      random.nextBytes(data);
      int start = random.nextInt(data.length + 1);
      int length = random.nextInt(data.length - start + 1);
      int mask = random.nextInt();
      long offset = n % 2 == 0 ? 0 : random.nextInt(1 << 20);
      ByteBuf from = n % 2 == 0 ? Unpooled.directBuffer(data.length).writeBytes(data) : Unpooled.wrappedBuffer(data.clone());
      ByteBuf to = n / 2 % 2 == 0 ? Unpooled.directBuffer(length) : Unpooled.buffer(length);

      Unmasker.copy(from, start, length, mask, offset, to);

      String which = "range " + start + "+" + length + " of " + data.length + ", offset " + offset;
      assertArrayEquals(reference(Arrays.copyOfRange(data, start, start + length), mask, offset), ByteBufUtil.getBytes(to), which);
      assertArrayEquals(data, ByteBufUtil.getBytes(from), "the source is left as it was: " + which);
      from.release();
      to.release();
    }
  }

  @Test
  void copyingInPiecesBehindAHeaderEqualsCopyingWhole() {
    Random random = new Random(11);
    byte[] data = new byte[70_000];
    random.nextBytes(data);
    int mask = random.nextInt();
    ByteBuf from = Unpooled.directBuffer(data.length).writeBytes(data);
    ByteBuf pieces = Unpooled.directBuffer(4 + data.length).writeInt(0x12345678);
    for (int at = 0; at < data.length; ) {
      int size = Math.min(data.length - at, 1 + random.nextInt(20_000));
      Unmasker.copy(from, at, size, mask, at, pieces);
      at += size;
    }
    assertEquals(0x12345678, pieces.getInt(0), "the header before the payload is left as it was");
    assertArrayEquals(reference(data, mask, 0), ByteBufUtil.getBytes(pieces, 4, data.length));
    from.release();
    pieces.release();
  }

  @Test
  void unmaskingInPiecesEqualsUnmaskingWhole() {
    Random random = new Random(7);
    byte[] data = new byte[10_000];
    random.nextBytes(data);
    int mask = random.nextInt();
    byte[] whole = data.clone();
    Unmasker.unmask(whole, 0, whole.length, mask, 0);
    byte[] pieces = data.clone();
    for (int at = 0; at < data.length; ) {
      int size = Math.min(data.length - at, 1 + random.nextInt(777));
      Unmasker.unmask(pieces, at, size, mask, at);
      at += size;
    }
    assertArrayEquals(whole, pieces);
  }
}
