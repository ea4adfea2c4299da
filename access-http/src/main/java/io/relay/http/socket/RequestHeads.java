package io.relay.http.socket;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Locale;
import org.apache.pekko.util.ByteString;

/**
 * Follows the request heads a client sends on an HTTP/1.1 connection, to tell whether the bytes
 * read so far end inside one: the server's header timeout ({@code relay.header-timeout}) applies
 * while they do.
 *
 * <p>A head ends at its first empty line (CRLF CRLF, RFC 9112 section 2.1). A {@code GET} head
 * without {@code Content-Length} and {@code Transfer-Encoding} has no body (section 6.3), so what
 * follows it is the next request. After any other head the next head's start cannot be found
 * without parsing a body, so the connection is no longer followed; nor after a head longer than
 * {@link #MAX_HEAD_BYTES}, which the HTTP parser refuses anyway.
 */
final class RequestHeads {
  static final int MAX_HEAD_BYTES = 64 * 1024;
  private static final byte[] END = {'\r', '\n', '\r', '\n'};

  private byte[] head = new byte[512];
  private int headLength;
  /** How many bytes of {@link #END} the head's last bytes match. */
  private int matched;
  private boolean followed = true;

  /** Whether the bytes read so far end inside a request head. */
  boolean inHead() {
    return followed && headLength > 0;
  }

  /** Whether heads are still followed on this connection. */
  boolean isFollowed() {
    return followed;
  }

  /** Reads the next bytes of the connection. */
  void follow(ByteString bytes) {
    if (!followed) {
      return;
    }
    for (int i = 0; i < bytes.length(); i++) {
      byte b = bytes.apply(i);
      matched = b == END[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
      if (headLength == MAX_HEAD_BYTES) {
        followed = false;
        return;
      }
      if (headLength == head.length) {
        head = Arrays.copyOf(head, Math.min(2 * head.length, MAX_HEAD_BYTES));
      }
      head[headLength++] = b;
      if (matched == END.length) {
        boolean bodiless = isBodilessGet(new String(head, 0, headLength, StandardCharsets.ISO_8859_1));
        headLength = 0;
        matched = 0;
        if (!bodiless) {
          followed = false;
          return;
        }
      }
    }
  }

  private static boolean isBodilessGet(String head) {
    if (!head.startsWith("GET ")) {
      return false;
    }
    String lower = head.toLowerCase(Locale.ROOT);
    return !lower.contains("\r\ncontent-length:") && !lower.contains("\r\ntransfer-encoding:");
  }
}
