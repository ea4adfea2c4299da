package io.relay.ws;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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

  private Unmasker() {}

  /**
   * Unmasks {@code data}, which starts {@code offset} bytes into the frame's payload.
   *
   * @param mask the frame's masking key, as the 32-bit big-endian integer of the frame header
   */
  public static ByteString unmask(ByteString data, int mask, long offset) {
    byte[] bytes = data.toArray();
    unmaskInPlace(bytes, mask, offset);
    return ByteString.fromArrayUnsafe(bytes);
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
