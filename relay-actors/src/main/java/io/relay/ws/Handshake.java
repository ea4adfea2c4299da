package io.relay.ws;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;

/**
 * The server's side of the WebSocket opening handshake (RFC 6455 section 4.2): what a client's
 * upgrade request must carry, and the {@code 101} answer that switches the connection to the
 * protocol. Works on header values: each is null when the request has none.
 */
public final class Handshake {
  /** The subprotocol browsers of practable's clients ask for; selected whenever it is requested. */
  public static final String NULL_PROTOCOL = "null";
  /** The one WebSocket version there is (section 4.4). */
  public static final String VERSION = "13";
  /** Section 1.3: appended to the client's key before hashing it into the answer. */
  private static final String ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  /** A key is 16 random bytes, base64-encoded (section 4.1, item 7): 24 characters. */
  private static final int KEY_BYTES = 16;

  private Handshake() {}

  /**
   * What is wrong with an upgrade request's headers as an opening handshake (section 4.2.1,
   * items 3 to 6), or null when nothing is: {@code Upgrade} holds {@code websocket}, {@code
   * Connection} holds {@code Upgrade} (both case-insensitive tokens of comma-separated lists), the
   * key decodes to 16 bytes, and the version is 13. Each argument is the header's value, or null
   * when the request has none.
   */
  public static Problem check(String upgrade, String connection, String key, String version) {
    if (version != null && !version.trim().equals(VERSION)) {
      return Problem.VERSION;
    }
    if (!hasToken(upgrade, "websocket") || !hasToken(connection, "upgrade") || version == null || !validKey(key)) {
      return Problem.NOT_AN_UPGRADE;
    }
    return null;
  }

  /** Why a request is not an opening handshake the server can answer. */
  public enum Problem {
    /** Answered with 426 and {@code Sec-WebSocket-Version: 13} (section 4.4). */
    VERSION,
    /** Answered with 400 (section 4.2.1: "MUST ... stop processing the client's handshake"). */
    NOT_AN_UPGRADE
  }

  /** Whether a comma-separated header value lists {@code token}, ignoring case and spaces. */
  private static boolean hasToken(String value, String token) {
    return value != null && Arrays.stream(value.split(",")).anyMatch(listed -> listed.trim().equalsIgnoreCase(token));
  }

  private static boolean validKey(String key) {
    if (key == null) {
      return false;
    }
    try {
      return Base64.getDecoder().decode(key.trim()).length == KEY_BYTES;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** The {@code Sec-WebSocket-Accept} value answering {@code key} (section 4.2.2, item 5.4). */
  public static String accept(String key) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-1").digest((key.trim() + ACCEPT_GUID).getBytes(StandardCharsets.US_ASCII));
      return Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK always has SHA-1", e);
    }
  }

  /**
   * The whole {@code 101 Switching Protocols} response to a handshake with {@code key}, selecting
   * {@code protocol} (null for none): the bytes to write before the first frame.
   */
  public static byte[] switching(String key, String protocol) {
    StringBuilder response =
        new StringBuilder(160)
            .append("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ")
            .append(accept(key))
            .append("\r\n");
    if (protocol != null) {
      response.append("Sec-WebSocket-Protocol: ").append(protocol).append("\r\n");
    }
    return response.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII);
  }
}
