package io.relay.harness;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** An HTTP response's status line and headers, read from the start of a buffer. */
record ResponseHead(int length, int status, String text) {
  /** The head at the start of {@code bytes} (position = bytes so far), or null while incomplete. */
  static ResponseHead parse(ByteBuffer bytes) {
    byte[] b = bytes.array();
    for (int i = 3; i < bytes.position(); i++) {
      if (b[i] == '\n' && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r') {
        String text = new String(b, 0, i + 1, StandardCharsets.ISO_8859_1);
        String[] status = text.substring(0, text.indexOf('\r')).split(" ", 3);
        int code = status.length >= 2 && status[0].startsWith("HTTP/") ? parseStatus(status[1]) : 0;
        return new ResponseHead(i + 1, code, text);
      }
    }
    return null;
  }

  private static int parseStatus(String s) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** A header's value (the first, trimmed), or null. */
  String header(String lowerCaseName) {
    for (String line : text.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).trim().toLowerCase(Locale.ROOT).equals(lowerCaseName)) {
        return line.substring(colon + 1).trim();
      }
    }
    return null;
  }
}
