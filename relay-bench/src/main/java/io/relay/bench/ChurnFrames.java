package io.relay.bench;

import java.nio.ByteBuffer;

/**
 * The churn's frames: each carries its sequence number, its topic's id and its length in its first
 * {@value #HEAD} bytes and a pattern drawn from those after them, so that a reader can tell its
 * topic's intact frame from another topic's and from bytes that are no writer's frame.
 */
final class ChurnFrames {
  /** The bytes of a frame's head: sequence number, topic id, length. */
  static final int HEAD = 12;

  private ChurnFrames() {}

  /** The first {@code size} bytes of frame {@code seq} of topic {@code topicId}. */
  static ByteBuffer frame(int topicId, int seq, int size) {
    ByteBuffer frame = ByteBuffer.allocate(size);
    frame.putInt(seq).putInt(topicId).putInt(size);
    int state = seed(topicId, seq);
    while (frame.hasRemaining()) {
      state = next(state);
      for (int i = 0; i < 4 && frame.hasRemaining(); i++) {
        frame.put((byte) (state >>> (8 * i)));
      }
    }
    return frame.flip();
  }

  /** Whether {@code bytes} is frame {@code seq} of topic {@code topicId}, whole and unchanged. */
  static boolean intact(byte[] bytes, int length, int topicId, int seq) {
    ByteBuffer head = ByteBuffer.wrap(bytes, 0, length);
    if (length < HEAD || head.getInt(0) != seq || head.getInt(4) != topicId || head.getInt(8) != length) {
      return false;
    }
    int state = seed(topicId, seq);
    int at = HEAD;
    while (at < length) {
      state = next(state);
      for (int i = 0; i < 4 && at < length; i++, at++) {
        if (bytes[at] != (byte) (state >>> (8 * i))) {
          return false;
        }
      }
    }
    return true;
  }

  /** Where {@code bytes} first differ from frame {@code seq} of topic {@code topicId}, and the bytes there. */
  static String difference(byte[] bytes, int length, int topicId, int seq) {
    ByteBuffer expected = frame(topicId, seq, Math.max(length, HEAD));
    for (int i = 0; i < length; i++) {
      if (bytes[i] != expected.get(i)) {
        StringBuilder found = new StringBuilder();
        for (int j = i; j < Math.min(length, i + 16); j++) {
          found.append(String.format("%02x", bytes[j]));
        }
        return "first differs at byte " + i + ": " + found;
      }
    }
    return "no byte differs";
  }

  /** The pattern's first state for a frame: never 0, which xorshift keeps. */
  private static int seed(int topicId, int seq) {
    int seed = (topicId * 0x9E3779B9) ^ (seq * 0x85EBCA6B) ^ 0x2545F491;
    return seed == 0 ? 1 : seed;
  }

  /** Marsaglia's 32-bit xorshift. */
  private static int next(int x) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x;
  }
}
