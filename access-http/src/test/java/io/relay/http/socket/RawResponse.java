package io.relay.http.socket;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** One HTTP/1.1 response read off a test's socket: its head as text and its body by Content-Length. */
record RawResponse(int status, String head, byte[] body) {
  static RawResponse read(Socket socket) throws IOException {
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("connection closed inside the response head: " + head);
      }
      head.write(b);
    }
    String text = head.toString(StandardCharsets.US_ASCII);
    int length = -1;
    for (String line : text.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    if (length < 0) {
      throw new IOException("no Content-Length in " + text);
    }
    return new RawResponse(Integer.parseInt(text.substring(9, 12)), text, in.readNBytes(length));
  }

  /** The server closed the connection (end of stream or a reset) before the socket's read timeout. */
  static void assertClosedByServer(Socket socket) throws IOException {
    try {
      if (socket.getInputStream().read() != -1) {
        throw new AssertionError("the server sent bytes instead of closing");
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the server did not close the connection within the socket's timeout", e);
    } catch (SocketException reset) {
      // a reset is a close too
    }
  }

  String text() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** The value of header {@code name} (case-insensitive), or null. */
  String header(String name) {
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).equalsIgnoreCase(name)) {
        return line.substring(colon + 1).trim();
      }
    }
    return null;
  }
}
