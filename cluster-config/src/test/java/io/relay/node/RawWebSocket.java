package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.SSLContext;

/**
 * A WebSocket client written against RFC 6455 over a blocking socket (plain or TLS): it sends what
 * browsers and other clients may send and the JDK's client never does (fragments, pings between
 * fragments, split headers, broken frames, frames in the same segment as the upgrade request),
 * and reads exactly what the server wrote.
 */
final class RawWebSocket implements AutoCloseable {
  static final int TEXT = 0x1;
  static final int BINARY = 0x2;
  static final int CONTINUATION = 0x0;
  static final int CLOSE = 0x8;
  static final int PING = 0x9;
  static final int PONG = 0xA;

  /** A frame as the server sent it. */
  record Frame(int opcode, boolean fin, byte[] payload) {
    int closeCode() {
      return payload.length < 2 ? 1005 : ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
    }

    String text() {
      return new String(payload, StandardCharsets.UTF_8);
    }
  }

  /** How the TCP connection ended after the last frame read. */
  enum End {
    /** The server ended it cleanly (a FIN). */
    CLOSED,
    /** The server reset it. */
    RESET,
    /** It was still open at the deadline. */
    STILL_OPEN
  }

  final Socket socket;
  final DataInputStream in;
  final OutputStream out;
  final String key;
  /** The server's answer to the upgrade request: status line and headers. */
  final String response;

  private RawWebSocket(Socket socket, String key, String response) throws IOException {
    this.socket = socket;
    this.in = new DataInputStream(socket.getInputStream());
    this.out = socket.getOutputStream();
    this.key = key;
    this.response = response;
  }

  static RawWebSocket connect(String wsUri) throws IOException {
    return connect(wsUri, null, "13", new byte[0]);
  }

  /**
   * Sends the upgrade request for {@code wsUri} and reads the server's answer, whatever its
   * status.
   *
   * @param tls the context to connect over TLS with, or null for plain TCP
   * @param version the Sec-WebSocket-Version to ask for
   * @param sameWrite bytes written in the same write as the request (so in the same TCP segment)
   */
  static RawWebSocket connect(String wsUri, SSLContext tls, String version, byte[] sameWrite) throws IOException {
    return connect(wsUri, tls, version, sameWrite, 0);
  }

  /** A plain-TCP client whose socket receive buffer is {@code receiveBuffer} bytes: a reader that stalls soon. */
  static RawWebSocket connectWithReceiveBuffer(String wsUri, int receiveBuffer) throws IOException {
    return connect(wsUri, null, "13", new byte[0], receiveBuffer);
  }

  private static RawWebSocket connect(String wsUri, SSLContext tls, String version, byte[] sameWrite, int receiveBuffer)
      throws IOException {
    URI uri = URI.create(wsUri);
    Socket socket;
    if (tls != null) {
      socket = tls.getSocketFactory().createSocket(uri.getHost(), uri.getPort());
    } else {
      socket = new Socket();
      if (receiveBuffer > 0) {
        socket.setReceiveBufferSize(receiveBuffer);
      }
      socket.connect(new java.net.InetSocketAddress(uri.getHost(), uri.getPort()), 10_000);
    }
    socket.setSoTimeout(10_000);
    socket.setTcpNoDelay(true);
    byte[] nonce = new byte[16];
    ThreadLocalRandom.current().nextBytes(nonce);
    String key = Base64.getEncoder().encodeToString(nonce);
    String request =
        "GET " + uri.getRawPath() + "?" + uri.getRawQuery() + " HTTP/1.1\r\n"
            + "Host: " + uri.getHost() + ":" + uri.getPort() + "\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: " + version + "\r\n"
            + "Sec-WebSocket-Protocol: null\r\n\r\n";
    ByteArrayOutputStream first = new ByteArrayOutputStream();
    first.writeBytes(request.getBytes(StandardCharsets.US_ASCII));
    first.writeBytes(sameWrite);
    socket.getOutputStream().write(first.toByteArray());
    socket.getOutputStream().flush();
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new AssertionError("the server closed before answering the handshake: " + head);
      }
      head.write(b);
    }
    return new RawWebSocket(socket, key, head.toString(StandardCharsets.US_ASCII));
  }

  /** One masked frame as a client writes it. */
  static byte[] frame(int opcode, boolean fin, byte[] payload) {
    return frame(opcode, fin, 0, payload);
  }

  /** One masked frame with the given RSV bits. */
  static byte[] frame(int opcode, boolean fin, int rsv, byte[] payload) {
    ByteArrayOutputStream frame = new ByteArrayOutputStream();
    frame.write((fin ? 0x80 : 0) | (rsv << 4) | opcode);
    int length = payload.length;
    if (length < 126) {
      frame.write(0x80 | length);
    } else if (length < 65_536) {
      frame.write(0x80 | 126);
      frame.write(length >> 8);
      frame.write(length);
    } else {
      frame.write(0x80 | 127);
      for (int i = 7; i >= 0; i--) {
        frame.write((int) ((long) length >> (8 * i)));
      }
    }
    byte[] mask = new byte[4];
    ThreadLocalRandom.current().nextBytes(mask);
    frame.writeBytes(mask);
    for (int i = 0; i < length; i++) {
      frame.write(payload[i] ^ mask[i & 3]);
    }
    return frame.toByteArray();
  }

  /** A close frame's body: a code and a reason. */
  static byte[] closeBody(int code, byte[] reason) {
    byte[] body = new byte[2 + reason.length];
    body[0] = (byte) (code >> 8);
    body[1] = (byte) code;
    System.arraycopy(reason, 0, body, 2, reason.length);
    return body;
  }

  void send(int opcode, boolean fin, byte[] payload) throws IOException {
    sendRaw(frame(opcode, fin, payload));
  }

  /**
   * Sends {@code payload} as binary messages, one after another, on a thread of {@code threads}
   * until {@code writing} turns false (or the connection fails).
   */
  Future<?> sendWhile(ExecutorService threads, AtomicBoolean writing, byte[] payload) {
    return threads.submit(() -> {
      while (writing.get()) {
        send(BINARY, true, payload);
      }
      return null;
    });
  }

  void sendText(String text) throws IOException {
    send(TEXT, true, text.getBytes(StandardCharsets.UTF_8));
  }

  void sendRaw(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /** Writes a frame one byte per TCP segment (no delay is set): every header is split. */
  void sendByteByByte(int opcode, boolean fin, byte[] payload) throws IOException {
    for (byte b : frame(opcode, fin, payload)) {
      out.write(b);
      out.flush();
    }
  }

  /** The next frame the server sent, failing after the socket's read timeout. */
  Frame next() throws IOException {
    int first = in.readUnsignedByte();
    int second = in.readUnsignedByte();
    assertEquals(0, second & 0x80, "server frames are never masked");
    long length = second & 0x7F;
    if (length == 126) {
      length = in.readUnsignedShort();
    } else if (length == 127) {
      length = in.readLong();
    }
    byte[] payload = new byte[(int) length];
    in.readFully(payload);
    return new Frame(first & 0x0F, (first & 0x80) != 0, payload);
  }

  /** The next frame, failing with {@code what} if the server closed the connection instead. */
  Frame next(String what) throws IOException {
    try {
      return next();
    } catch (EOFException e) {
      throw new AssertionError("the server closed the connection before " + what, e);
    }
  }

  /**
   * Waits up to {@code deadline} for the server to end the TCP connection, failing if it sends
   * anything more.
   */
  End awaitEnd(Duration deadline) throws IOException {
    socket.setSoTimeout((int) deadline.toMillis());
    try {
      int b = in.read();
      if (b >= 0) {
        throw new AssertionError("the server sent more after its close frame: byte " + b);
      }
      return End.CLOSED;
    } catch (SocketTimeoutException e) {
      return End.STILL_OPEN;
    } catch (IOException e) {
      return End.RESET;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
