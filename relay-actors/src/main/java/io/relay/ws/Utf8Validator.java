package io.relay.ws;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Checks that a text message is valid UTF-8 (RFC 6455 section 8.1, RFC 3629) as its bytes arrive,
 * in pieces split anywhere, even inside a code point: a message is rejected with the first piece
 * holding a byte that no valid UTF-8 text could continue with, not only at its end.
 *
 * <p>The check is Bjoern Hoehrmann's deterministic automaton over byte classes, which rejects
 * overlong forms, surrogates (U+D800..U+DFFF) and code points above U+10FFFF, as the JDK's strict
 * decoder does. It runs as a shift-based automaton: each byte value has one 64-bit row holding
 * the next state of every state, six bits each, so a byte costs one table load that does not wait
 * on the state and one shift that does. The reject state leads only to itself, so it is checked
 * once a piece. Runs of ASCII, which most text messages are made of, are skipped 32 bytes at a
 * time.
 */
public final class Utf8Validator {
  /** States are bit offsets into a row: state i of the automaton is 6 * i. */
  private static final int ACCEPT = 0;
  private static final int REJECT = 6;
  private static final long HIGH_BITS = 0x8080808080808080L;
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** For each byte value, the next state of every state. */
  private static final long[] ROWS = rows();

  private int state = ACCEPT;

  /**
   * Checks the next {@code length} bytes of the text from {@code start}.
   *
   * @return false if they make the text invalid, whatever may follow
   */
  public boolean feed(byte[] bytes, int start, int length) {
    int s = state;
    int i = start;
    int end = start + length;
    while (i < end) {
      if (s == ACCEPT) {
        i = skipAscii(bytes, i, end);
        if (i == end) {
          break;
        }
      }
      s = (int) (ROWS[bytes[i] & 0xFF] >>> s) & 63;
      i++;
    }
    state = s;
    return s != REJECT;
  }

  /** The index of the first byte from {@code i} that is not ASCII, or {@code end}. */
  private static int skipAscii(byte[] bytes, int i, int end) {
    while (i + 32 <= end
        && (((long) LONGS.get(bytes, i)
                    | (long) LONGS.get(bytes, i + 8)
                    | (long) LONGS.get(bytes, i + 16)
                    | (long) LONGS.get(bytes, i + 24))
                & HIGH_BITS)
            == 0) {
      i += 32;
    }
    while (i + 8 <= end && ((long) LONGS.get(bytes, i) & HIGH_BITS) == 0) {
      i += 8;
    }
    while (i < end && bytes[i] >= 0) {
      i++;
    }
    return i;
  }

  /** Whether the text fed so far ends on a whole code point (and is valid). */
  public boolean isComplete() {
    return state == ACCEPT;
  }

  /** Starts checking a new text. */
  public void reset() {
    state = ACCEPT;
  }

  /** Whether {@code bytes} from {@code start}, {@code length} long, are a whole valid UTF-8 text. */
  public static boolean isValid(byte[] bytes, int start, int length) {
    Utf8Validator validator = new Utf8Validator();
    return validator.feed(bytes, start, length) && validator.isComplete();
  }

  /**
   * The rows of the shift-based automaton, from Hoehrmann's tables: byte classes, and transitions
   * between states numbered in multiples of 12 (0 accepts, 12 rejects).
   */
  private static long[] rows() {
    byte[] classes = new byte[256];
    int[] classRanges = { // first byte, last byte, class; bytes below 0x80 are class 0
      0x80, 0x8F, 1, 0x90, 0x9F, 9, 0xA0, 0xBF, 7, 0xC0, 0xC1, 8, 0xC2, 0xDF, 2, 0xE0, 0xE0, 10, 0xE1, 0xEC, 3,
      0xED, 0xED, 4, 0xEE, 0xEF, 3, 0xF0, 0xF0, 11, 0xF1, 0xF3, 6, 0xF4, 0xF4, 5, 0xF5, 0xFF, 8,
    };
    for (int i = 0; i < classRanges.length; i += 3) {
      Arrays.fill(classes, classRanges[i], classRanges[i + 1] + 1, (byte) classRanges[i + 2]);
    }
    byte[] transitions = {
      0, 12, 24, 36, 60, 96, 84, 12, 12, 12, 48, 72, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
      12, 0, 12, 12, 12, 12, 12, 0, 12, 0, 12, 12, 12, 24, 12, 12, 12, 12, 12, 24, 12, 24, 12, 12,
      12, 12, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12, 12, 12, 12, 24, 12, 12,
      12, 12, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12, 12, 36, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12,
      12, 36, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
    };
    long[] rows = new long[256];
    for (int b = 0; b < 256; b++) {
      for (int state = 0; state < 9; state++) {
        int next = transitions[12 * state + classes[b]] / 12;
        rows[b] |= (long) (6 * next) << (6 * state);
      }
    }
    return rows;
  }
}
