package io.relay.ws;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.apache.pekko.util.ByteString;

/**
 * Removes the client's XOR mask from WebSocket payload bytes, eight bytes at a time.
 *
 * <p>Pekko HTTP 1.3.0 unmasks one byte at a time, which PERFORMANCE-NOTES measured as the largest
 * cost of a relay; this is the one copy a masked payload needs.
 */
public final class Unmasker {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle NATIVE_LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

  /** Below this many bytes the buffer views of the one-pass path cost more than they save. */
  private static final int SMALL = 512;

  private Unmasker() {}

  /**
   * Unmasks {@code data}, which starts {@code offset} bytes into the frame's payload.
   *
   * @param mask the frame's masking key, as the 32-bit big-endian integer of the frame header
   */
  public static ByteString unmask(ByteString data, int mask, long offset) {
    // one pass: read the received bytes where they are (a read-only view, no copy, for the
    // contiguous ByteStrings the frame parser hands over), write them unmasked into the one new
    // array; native byte order, so no byte swapping per eight bytes
    int length = data.length();
    if (length < SMALL || data instanceof ByteString.ByteStrings) {
      // small, or a rope of pieces (a frame that spanned socket reads), whose buffer view
      // would be a copy anyway: copy once and unmask the copy in place
      byte[] bytes = data.toArray();
      unmaskInPlace(bytes, mask, offset);
      return ByteString.fromArrayUnsafe(bytes);
    }
    byte[] out = new byte[length];
    ByteBuffer in = data.asByteBuffer().order(ByteOrder.nativeOrder());
    int base = in.position();
    int rotated = Integer.rotateLeft(mask, 8 * (int) (offset & 3));
    long bigEndian = ((long) rotated << 32) | (rotated & 0xFFFFFFFFL);
    long wide = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? bigEndian : Long.reverseBytes(bigEndian);
    int i = 0;
    int whole = length & ~7;
    for (; i < whole; i += 8) {
      NATIVE_LONGS.set(out, i, in.getLong(base + i) ^ wide);
    }
    for (; i < length; i++) {
      out[i] = (byte) (in.get(base + i) ^ (rotated >>> (24 - 8 * (i & 3))));
    }
    return ByteString.fromArrayUnsafe(out);
  }

  /** Unmasks {@code bytes} in place; see {@link #unmask}. */
  public static void unmaskInPlace(byte[] bytes, int mask, long offset) {
    int rotated = Integer.rotateLeft(mask, 8 * (int) (offset & 3));
    long wide = ((long) rotated << 32) | (rotated & 0xFFFFFFFFL);
    int i = 0;
    int whole = bytes.length & ~7;
    for (; i < whole; i += 8) {
      LONGS.set(bytes, i, (long) LONGS.get(bytes, i) ^ wide);
    }
    for (; i < bytes.length; i++) {
      bytes[i] ^= (byte) (rotated >>> (24 - 8 * (i & 3)));
    }
  }
}
