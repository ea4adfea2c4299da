package io.relay.bench;

import java.nio.charset.StandardCharsets;

/** Reads an HTTP/1.1 response head from the first bytes of a connection, as a generator receives them. */
final class ResponseHead {
  private ResponseHead() {}

  /** Where the head ends (just past its blank line) in the first {@code length} of {@code bytes}, or -1 if it has not yet. */
  static int end(byte[] bytes, int length) {
    for (int i = 0; i + 3 < length; i++) {
      if (bytes[i] == '\r' && bytes[i + 1] == '\n' && bytes[i + 2] == '\r' && bytes[i + 3] == '\n') {
        return i + 4;
      }
    }
    return -1;
  }

  /** The {@code Content-Length} of the head that ends at {@code headEnd}, or -1 without one. */
  static int contentLength(byte[] bytes, int headEnd) {
    for (String line : new String(bytes, 0, headEnd, StandardCharsets.ISO_8859_1).split("\r\n")) {
      if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
        return Integer.parseInt(line.substring(15).trim());
      }
    }
    return -1;
  }

  /** The status of an HTTP/1.1 response whose first {@code length} bytes are read, or -1 if they are not one's. */
  static int status(byte[] bytes, int length) {
    String head = new String(bytes, 0, Math.min(length, 12), StandardCharsets.ISO_8859_1);
    if (head.length() < 12 || !head.startsWith("HTTP/1.1 ")) {
      return -1;
    }
    try {
      return Integer.parseInt(head.substring(9, 12));
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
