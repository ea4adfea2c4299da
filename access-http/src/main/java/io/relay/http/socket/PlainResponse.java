package io.relay.http.socket;

import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Map;

/**
 * A response with a one-line plain-text body that closes its connection ({@code Connection:
 * close}): how a port that serves only upgrades refuses a request.
 */
public final class PlainResponse {
  private PlainResponse() {}

  /** The response {@code status} with body {@code line} and a newline, and {@code headers}. */
  public static byte[] render(int status, String line, Map<String, String> headers) {
    byte[] body = (line + "\n").getBytes(StandardCharsets.UTF_8);
    StringBuilder head =
        new StringBuilder(192)
            .append("HTTP/1.1 ")
            .append(status)
            .append(' ')
            .append(reason(status))
            .append("\r\nDate: ")
            .append(DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC)))
            .append("\r\nConnection: close\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Length: ")
            .append(body.length)
            .append("\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
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
