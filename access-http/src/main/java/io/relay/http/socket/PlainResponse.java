package io.relay.http.socket;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.Map;

/**
 * The bytes of a response the node writes itself, without Pekko HTTP's renderer: a refusal with a
 * one-line plain-text body that closes its connection ({@code Connection: close}), as a port that
 * answers its requests itself sends it, or any response with its body and content type.
 */
public final class PlainResponse {
  /** RFC 9110 section 5.6.7's IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT}). */
  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

  private PlainResponse() {}

  /** The response {@code status} with body {@code line} and a newline, and {@code headers}; it closes the connection. */
  public static byte[] render(int status, String line, Map<String, String> headers) {
    return render(
        status, reason(status), headers.entrySet(), "text/plain; charset=UTF-8", (line + "\n").getBytes(StandardCharsets.UTF_8), true);
  }

  /**
   * The response {@code status} with its {@code reason} phrase, {@code headers}, and {@code body}
   * of {@code contentType}; {@code close} adds {@code Connection: close}.
   */
  public static byte[] render(
      int status, String reason, Iterable<Map.Entry<String, String>> headers, String contentType, byte[] body, boolean close) {
    StringBuilder head =
        new StringBuilder(256)
            .append("HTTP/1.1 ")
            .append(status)
            .append(' ')
            .append(reason)
            .append("\r\nDate: ")
            .append(IMF_FIXDATE.format(Instant.now()))
            .append(close ? "\r\nConnection: close" : "")
            .append("\r\nContent-Type: ")
            .append(contentType)
            .append("\r\nContent-Length: ")
            .append(body.length)
            .append("\r\n");
    headers.forEach(header -> head.append(header.getKey()).append(": ").append(header.getValue()).append("\r\n"));
    head.append("\r\n");
    byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
    byte[] response = new byte[headBytes.length + body.length];
    System.arraycopy(headBytes, 0, response, 0, headBytes.length);
    System.arraycopy(body, 0, response, headBytes.length, body.length);
    return response;
  }

  /** The reason phrase of the statuses a refusal uses (RFC 9110 section 15). */
  static String reason(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 414 -> "URI Too Long";
      case 426 -> "Upgrade Required";
      case 431 -> "Request Header Fields Too Large";
      case 500 -> "Internal Server Error";
      case 503 -> "Service Unavailable";
      case 505 -> "HTTP Version Not Supported";
      default -> "Error";
    };
  }
}
