package io.relay.ws;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Removes the client's XOR mask from WebSocket payload bytes, eight bytes at a time, as longs in
 * the machine's own byte order: the mask is put in that order once per call, so that no access
 * swaps bytes. {@link InboundProtocol} unmasks each payload it keeps once, in the message's own
 * array, right after each piece is copied there, while the bytes are still in the cache; a binary
 * message of one frame is unmasked as it is copied into the frame it is relayed in ({@link
 * #copy}), piece by piece when reads cut it. Each method has its own loop: one over both kinds of
 * buffer had the frame copy compiled at 22 GB/s, not 29 (docs/benchmark-notes.md, row 18).
 */
public final class Unmasker {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  private Unmasker() {}

  /**
   * Writes {@code length} bytes of {@code from} from index {@code start}, payload bytes of a frame
   * masked with {@code mask}, to {@code to} unmasked, eight bytes at a time. Both buffers are read
   * and written through one view each, so a buffer that records its accesses (Netty's leak
   * detector at its paranoid level) records one, not one per eight bytes.
   *
   * @param offset how far into the frame's payload {@code from}'s byte at {@code start} is
   */
  public static void copy(ByteBuf from, int start, int length, int mask, long offset, ByteBuf to) {
    to.ensureWritable(length);
    ByteBuffer in = from.nioBuffer(start, length).order(ByteOrder.nativeOrder());
    ByteBuffer out = to.nioBuffer(to.writerIndex(), length).order(ByteOrder.nativeOrder());
    int rotated = Integer.rotateLeft(mask, 8 * (int) (offset & 3));
    long wide = wide(rotated);
    int i = 0;
    int whole = length & ~7;
    for (; i < whole; i += 8) {
      out.putLong(i, in.getLong(i) ^ wide);
    }
    for (; i < length; i++) {
      out.put(i, (byte) (in.get(i) ^ (rotated >>> (24 - 8 * (i & 3)))));
    }
    to.writerIndex(to.writerIndex() + length);
  }

  /**
   * Unmasks {@code length} bytes of {@code bytes} from {@code start}, in place.
   *
   * @param mask the frame's masking key, as the 32-bit big-endian integer of the frame header
   * @param offset how far into the frame's payload {@code bytes[start]} is
   */
  public static void unmask(byte[] bytes, int start, int length, int mask, long offset) {
    int rotated = Integer.rotateLeft(mask, 8 * (int) (offset & 3));
    long wide = wide(rotated);
    int i = 0;
    int whole = length & ~7;
    for (; i < whole; i += 8) {
      LONGS.set(bytes, start + i, (long) LONGS.get(bytes, start + i) ^ wide);
    }
    for (; i < length; i++) {
      bytes[start + i] ^= (byte) (rotated >>> (24 - 8 * (i & 3)));
    }
  }

  /**
   * The mask {@code rotated} (the bytes of a 32-bit big-endian integer) twice, as a long in the
   * machine's own byte order: the long that masks eight payload bytes read in that order.
   */
  private static long wide(int rotated) {
    int inMemory = LITTLE_ENDIAN ? Integer.reverseBytes(rotated) : rotated;
    return ((long) inMemory << 32) | (inMemory & 0xFFFFFFFFL);
  }
}
