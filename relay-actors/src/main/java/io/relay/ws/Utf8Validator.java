package io.relay.ws;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Checks that a text message is valid UTF-8 (RFC 6455 section 8.1, RFC 3629) as its bytes arrive,
 * in pieces split anywhere, even inside a code point: a message is rejected at its first byte that
 * no valid UTF-8 text could continue with, not only at its end.
 *
 * <p>The check is Bjoern Hoehrmann's deterministic automaton over byte classes, which rejects
 * overlong forms, surrogates (U+D800..U+DFFF) and code points above U+10FFFF, as the JDK's strict
 * decoder does. Runs of ASCII, which most text messages are made of, are skipped eight bytes at a
 * time.
 */
public final class Utf8Validator {
  private static final int ACCEPT = 0;
  private static final int REJECT = 12;
  private static final long HIGH_BITS = 0x8080808080808080L;
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** The class of each byte value. */
  private static final byte[] CLASSES = classes();

  /** The next state for each state (a multiple of 12) plus a byte's class. */
  private static final byte[] TRANSITIONS = {
    0, 12, 24, 36, 60, 96, 84, 12, 12, 12, 48, 72, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
    12, 0, 12, 12, 12, 12, 12, 0, 12, 0, 12, 12, 12, 24, 12, 12, 12, 12, 12, 24, 12, 24, 12, 12,
    12, 12, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12, 12, 24, 12, 12, 12, 12, 12, 12, 12, 24, 12, 12,
    12, 12, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12, 12, 36, 12, 12, 12, 12, 12, 36, 12, 36, 12, 12,
    12, 36, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12,
  };

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
        while (i + 8 <= end && ((long) LONGS.get(bytes, i) & HIGH_BITS) == 0) {
          i += 8;
        }
        while (i < end && bytes[i] >= 0) {
          i++;
        }
        if (i == end) {
          break;
        }
      }
      s = TRANSITIONS[s + CLASSES[bytes[i] & 0xFF]];
      if (s == REJECT) {
        state = REJECT;
        return false;
      }
      i++;
    }
    state = s;
    return true;
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

  private static byte[] classes() {
    byte[] classes = new byte[256];
    fill(classes, 0x80, 0x8F, 1);
    fill(classes, 0x90, 0x9F, 9);
    fill(classes, 0xA0, 0xBF, 7);
    fill(classes, 0xC0, 0xC1, 8);
    fill(classes, 0xC2, 0xDF, 2);
    fill(classes, 0xE0, 0xE0, 10);
    fill(classes, 0xE1, 0xEC, 3);
    fill(classes, 0xED, 0xED, 4);
    fill(classes, 0xEE, 0xEF, 3);
    fill(classes, 0xF0, 0xF0, 11);
    fill(classes, 0xF1, 0xF3, 6);
    fill(classes, 0xF4, 0xF4, 5);
    fill(classes, 0xF5, 0xFF, 8);
    return classes;
  }

  private static void fill(byte[] classes, int from, int to, int value) {
    for (int b = from; b <= to; b++) {
      classes[b] = (byte) value;
    }
  }
}
