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
 * cost of a relay. Payload bytes arrive in an array filled for this connection alone (one new
 * array per socket read, by the node's socket stage or Pekko's TCP layer), so a large payload is
 * unmasked where it lies instead of into a copy: half of what a relay node allocated per
 * received byte.
 */
public final class Unmasker {
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle NATIVE_LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.nativeOrder());

  /** Below this many bytes the buffer views of the one-pass path cost more than they save. */
  private static final int SMALL = 512;

  // Where a contiguous ByteString keeps its bytes (Pekko's private fields; null, and every payload
  // copied, if a Pekko version names them differently)
  private static final VarHandle SLICE_BYTES = field(ByteString.ByteString1.class, "bytes", byte[].class);
  private static final VarHandle SLICE_START = field(ByteString.ByteString1.class, "startIndex", int.class);
  private static final VarHandle COMPACT_BYTES = field(ByteString.ByteString1C.class, "bytes", byte[].class);

  private Unmasker() {}

  /**
   * Unmasks {@code data}, which starts {@code offset} bytes into the frame's payload.
   *
   * <p>{@code data} is consumed: a large contiguous payload that fills at least half of its array
   * is unmasked in that array and returned as it is (a slice never keeps more than twice its own
   * size alive in a reader's queue); anything else is unmasked into a new array.
   *
   * @param mask the frame's masking key, as the 32-bit big-endian integer of the frame header
   */
  public static ByteString unmask(ByteString data, int mask, long offset) {
    int length = data.length();
    if (length >= SMALL && unmaskWhereItLies(data, mask, offset)) {
      return data;
    }
    // one pass: read the received bytes where they are (a read-only view, no copy, for the
    // contiguous ByteStrings the frame parser hands over), write them unmasked into the one new
    // array; native byte order, so no byte swapping per eight bytes
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
    unmaskRange(bytes, 0, bytes.length, mask, offset);
  }

  private static boolean unmaskWhereItLies(ByteString data, int mask, long offset) {
    byte[] array;
    int start;
    if (data instanceof ByteString.ByteString1C && COMPACT_BYTES != null) {
      array = (byte[]) COMPACT_BYTES.get(data);
      start = 0;
    } else if (data instanceof ByteString.ByteString1 && SLICE_BYTES != null && SLICE_START != null) {
      array = (byte[]) SLICE_BYTES.get(data);
      start = (int) SLICE_START.get(data);
    } else {
      return false;
    }
    if (2L * data.length() < array.length) {
      return false;
    }
    unmaskRange(array, start, data.length(), mask, offset);
    return true;
  }

  private static void unmaskRange(byte[] bytes, int start, int length, int mask, long offset) {
    int rotated = Integer.rotateLeft(mask, 8 * (int) (offset & 3));
    long wide = ((long) rotated << 32) | (rotated & 0xFFFFFFFFL);
    int i = 0;
    int whole = length & ~7;
    for (; i < whole; i += 8) {
      LONGS.set(bytes, start + i, (long) LONGS.get(bytes, start + i) ^ wide);
    }
    for (; i < length; i++) {
      bytes[start + i] ^= (byte) (rotated >>> (24 - 8 * (i & 3)));
    }
  }

  private static VarHandle field(Class<?> owner, String name, Class<?> type) {
    try {
      return MethodHandles.privateLookupIn(owner, MethodHandles.lookup()).findVarHandle(owner, name, type);
    } catch (ReflectiveOperationException | SecurityException e) {
      return null;
    }
  }
}
