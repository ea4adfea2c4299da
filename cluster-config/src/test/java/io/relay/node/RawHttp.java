package io.relay.node;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import javax.net.ssl.SSLContext;

/** Sends bytes no HTTP client would send (illegal characters, over-long heads, a request cut in two) and reads the answers. */
final class RawHttp {
  /**
   * How long an answer may take: the node answers a whole request at once, and one whose announced
   * body never comes is not answered at all (it waits for the body), so this is also what such a
   * request costs a test.
   */
  private static final int TIMEOUT_MILLIS = 3_000;

  private RawHttp() {}

  /**
   * Writes {@code request} to {@code port} on loopback, over TLS when {@code tls} is set, and
   * returns the status line of the answer, or what ended the connection instead.
   */
  static String exchange(int port, SSLContext tls, String request) {
    try (Socket socket = tls == null ? new Socket("127.0.0.1", port) : tls.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(TIMEOUT_MILLIS);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      socket.getOutputStream().flush();
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      for (int b; (b = in.read()) != -1 && b != '\n'; ) {
        line.write(b);
      }
      return line.size() == 0 ? "(closed without an answer)" : line.toString(StandardCharsets.ISO_8859_1).trim();
    } catch (SocketTimeoutException e) {
      return "(no answer within " + TIMEOUT_MILLIS + " ms)";
    } catch (IOException e) {
      return "(" + e.getClass().getSimpleName() + ")";
    }
  }

  /**
   * Writes {@code bytes} on {@code socket}, a connection kept between requests, and reads one answer
   * whole (its head and its Content-Length of body).
   */
  static String answer(Socket socket, String bytes) throws IOException {
    socket.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
    InputStream in = socket.getInputStream();
    String head = readHead(in);
    return head + new String(in.readNBytes(Integer.parseInt(head.replaceAll("(?s).*\r\nContent-Length: (\\d+)\r\n.*", "$1"))), StandardCharsets.ISO_8859_1);
  }

  private static String readHead(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (head.indexOf("\r\n\r\n") < 0) {
      int b = in.read();
      if (b < 0) {
        throw new AssertionError("closed within the head: " + head);
      }
      head.append((char) b);
    }
    return head.toString();
  }
}
