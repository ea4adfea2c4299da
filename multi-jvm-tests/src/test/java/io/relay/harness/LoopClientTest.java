package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.bench.SelectorLoop;
import io.relay.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The harness's client against a scripted server on loopback: it asks for a code, honours
 * {@code Retry-After}, checks the handshake, joins fragments, answers pings, masks what it sends,
 * and reconnects as the relay's close codes say (at once after 4001, with backoff after a dropped
 * connection, never after 4003).
 */
class LoopClientTest {
  private static final Duration STEP = Duration.ofSeconds(10);

  private final SelectorLoop loop = new SelectorLoop("loop-client-test", 1000, () -> {});
  private final ServerSocket server = listen();
  private final String base = "127.0.0.1:" + server.getLocalPort();
  private final Participant participant = new Participant("p", loop, "http://" + base, null, "lab/1", "the-token");

  @AfterEach
  void stop() throws IOException {
    participant.close();
    loop.close();
    server.close();
  }

  @Test
  void followsTheRelaysAnswersAndCloseCodes() throws Exception {
    participant.start();

    long refusedAt;
    try (Socket post = accept()) {
      String request = head(post.getInputStream());
      assertTrue(request.startsWith("POST /session/lab/1 HTTP/1.1\r\n"), request);
      assertTrue(request.contains("\r\nAuthorization: the-token\r\n"), request);
      answer(post, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 2\r\n\r\n{}");
      refusedAt = System.nanoTime();
    }
    try (Socket post = accept()) {
      head(post.getInputStream());
      assertTrue(System.nanoTime() - refusedAt >= 900_000_000L, "the second request waited for Retry-After: 1");
      grantCode(post);
    }
    Await.until("the refusal is recorded", STEP, () -> participant.refusals().equals(List.of(503)));

    try (Socket ws = upgrade()) {
      OutputStream out = ws.getOutputStream();
      out.write(new byte[] {0x01, 7, 'l', 'a', 'b', '/', '1', ' ', '1'}); // text, not final: "lab/1 1"
      out.write(new byte[] {(byte) 0x80, 1, '2'}); // continuation, final
      out.write(new byte[] {(byte) 0x89, 2, 'h', 'i'}); // ping
      byte[] pong = readFrame(ws.getInputStream());
      assertEquals(0x8A, pong[0] & 0xFF, "a pong answers the ping");
      assertArrayEquals("hi".getBytes(StandardCharsets.US_ASCII), payload(pong), "the pong echoes the ping's payload");
      Await.until("the fragments arrive as one message", STEP, () -> participant.receivedCount() == 1);
      assertEquals(12, participant.received().get(0).seq());

      loop.execute(() -> participant.send(7));
      byte[] sent = readFrame(ws.getInputStream());
      assertEquals(0x81, sent[0] & 0xFF, "a final text frame");
      assertTrue((sent[1] & 0x80) != 0, "masked");
      assertArrayEquals("lab/1 7".getBytes(StandardCharsets.US_ASCII), payload(sent), "the message names its topic");

      out.write(new byte[] {(byte) 0x88, 2, 0x0F, (byte) 0xA1}); // close 4001: the topic moved
      byte[] echo = readFrame(ws.getInputStream());
      assertEquals(0x88, echo[0] & 0xFF, "the close is echoed");
      assertArrayEquals(new byte[] {0x0F, (byte) 0xA1}, payload(echo));
    }
    try (Socket post = accept()) {
      head(post.getInputStream());
      grantCode(post);
    }
    try (Socket ws = upgrade()) {
      Await.until("the second connection is open", STEP, participant::isConnected);
    } // dropped without a close frame
    try (Socket post = accept()) {
      head(post.getInputStream());
      grantCode(post);
    }
    try (Socket ws = upgrade()) {
      ws.getOutputStream().write(new byte[] {(byte) 0x88, 2, 0x0F, (byte) 0xA3}); // close 4003: booking denied
      Await.until("the client stops after 4003", STEP, participant::isStopped);
    }
    List<Integer> closes = participant.connections().stream().map(Participant.Connection::closeCode).toList();
    assertEquals(List.of(4001, 1006, 4003), closes);
  }

  private Socket upgrade() throws Exception {
    Socket ws = accept();
    String request = head(ws.getInputStream());
    assertTrue(request.startsWith("GET /session/lab/1?code=c0de HTTP/1.1\r\n"), request);
    String key = header(request, "sec-websocket-key");
    String accept =
        Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-1").digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII)));
    answer(ws, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n\r\n");
    return ws;
  }

  private void grantCode(Socket post) throws IOException {
    String body = "{\"uri\":\"ws://" + base + "/session/lab/1?code=c0de\"}";
    answer(post, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body);
  }

  private Socket accept() throws IOException {
    Socket socket = server.accept();
    socket.setSoTimeout((int) STEP.toMillis());
    return socket;
  }

  private static ServerSocket listen() {
    try {
      ServerSocket socket = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
      socket.setSoTimeout((int) STEP.toMillis());
      return socket;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static void answer(Socket socket, String response) throws IOException {
    socket.getOutputStream().write(response.getBytes(StandardCharsets.US_ASCII));
    socket.getOutputStream().flush();
  }

  private static String head(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the client closed before a whole request head: " + head);
      }
      head.write(b);
    }
    return head.toString(StandardCharsets.US_ASCII);
  }

  private static String header(String head, String name) {
    for (String line : head.split("\r\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && line.substring(0, colon).toLowerCase(Locale.ROOT).equals(name)) {
        return line.substring(colon + 1).trim();
      }
    }
    throw new AssertionError("no " + name + " in " + head);
  }

  /** A short client frame (payload under 126 bytes): its two header bytes, mask key and payload. */
  private static byte[] readFrame(InputStream in) throws IOException {
    byte[] start = in.readNBytes(2);
    int length = start[1] & 0x7F;
    byte[] rest = in.readNBytes(((start[1] & 0x80) != 0 ? 4 : 0) + length);
    byte[] frame = new byte[2 + rest.length];
    System.arraycopy(start, 0, frame, 0, 2);
    System.arraycopy(rest, 0, frame, 2, rest.length);
    return frame;
  }

  /** A frame's payload, unmasked. */
  private static byte[] payload(byte[] frame) {
    boolean masked = (frame[1] & 0x80) != 0;
    int from = 2 + (masked ? 4 : 0);
    byte[] payload = new byte[frame.length - from];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) (frame[from + i] ^ (masked ? frame[2 + (i & 3)] : 0));
    }
    return payload;
  }
}
