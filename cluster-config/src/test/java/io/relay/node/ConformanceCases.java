package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * RFC 6455 as a client sees a running node speak it, from raw sockets: the cases of the Autobahn
 * conformance suite's groups that the relay's protocol core decides (UTF-8, close frames, pings,
 * protocol errors, the size limit), and when the server ends the TCP connection. Run over plain
 * TCP ({@link ConformanceTest}) and over the node's own TLS ({@link TlsConformanceTest}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConformanceCases {
  /** The node's close timeout: far longer than {@link #PROMPTLY}, so a test tells them apart. */
  static final Map<String, Object> SETTINGS = Map.of("relay.close-timeout", "30s", "relay.max-message-bytes", "64KiB");
  /** How soon the server must end a connection it does not wait on. */
  private static final Duration PROMPTLY = Duration.ofSeconds(10);

  private static final AtomicInteger TOPICS = new AtomicInteger();

  TestNode node;
  AccessClient access;
  /** The TLS context to connect with, or null for plain TCP. */
  SSLContext tls;

  @AfterAll
  void stop() {
    node.close();
  }

  static String newTopic() {
    return "conformance/t" + TOPICS.incrementAndGet();
  }

  RawWebSocket open(String topic, String... scopes) throws IOException {
    return open(topic, new byte[0], scopes);
  }

  RawWebSocket open(String topic, byte[] sameWrite, String... scopes) throws IOException {
    RawWebSocket socket = RawWebSocket.connect(access.relayUri(topic, Tokens.session(topic, scopes)), tls, "13", sameWrite);
    assertTrue(socket.response.startsWith("HTTP/1.1 101 "), socket.response);
    return socket;
  }

  private static byte[] bytes(int... values) {
    byte[] bytes = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      bytes[i] = (byte) values[i];
    }
    return bytes;
  }

  /** The server closes with {@code code} and then ends the TCP connection without waiting. */
  private static void assertFailedWith(int code, RawWebSocket socket, String why) throws IOException {
    RawWebSocket.Frame close = socket.next("closing for " + why);
    assertEquals(RawWebSocket.CLOSE, close.opcode(), why + ": a close frame");
    assertEquals(code, close.closeCode(), why);
    assertEquals(RawWebSocket.End.CLOSED, socket.awaitEnd(PROMPTLY), why + ": the server ends the TCP connection at once");
  }

  @Test
  void aTextMessageThatIsNotUtf8ClosesItsSenderWith1007AndReachesNoReader() throws Exception {
    String topic = newTopic();
    try (RawWebSocket reader = open(topic, "read");
        RawWebSocket writer = open(topic, "write");
        RawWebSocket other = open(topic, "write")) {
      writer.send(RawWebSocket.TEXT, true, bytes('o', 'k', 0xED, 0xA0, 0x80));
      assertFailedWith(1007, writer, "a surrogate in UTF-8");
      other.sendText("after");
      assertEquals("after", reader.next("the next message").text(), "the invalid message never reached the reader");
    }
  }

  @Test
  void invalidUtf8FailsAtItsFirstBadByteBeforeTheMessageEnds() throws Exception {
    try (RawWebSocket writer = open(newTopic(), "read", "write")) {
      writer.send(RawWebSocket.TEXT, false, bytes(0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xF4, 0x90));
      assertFailedWith(1007, writer, "a code point above U+10FFFF, the message still unfinished");
    }
  }

  @Test
  void textSplitInsideACodePointAcrossFragmentsArrivesWhole() throws Exception {
    String topic = newTopic();
    byte[] text = "κόσμε 🎉".getBytes(StandardCharsets.UTF_8);
    try (RawWebSocket reader = open(topic, "read");
        RawWebSocket writer = open(topic, "write")) {
      for (int i = 0; i < text.length; i++) {
        writer.send(i == 0 ? RawWebSocket.TEXT : RawWebSocket.CONTINUATION, i == text.length - 1, new byte[] {text[i]});
      }
      RawWebSocket.Frame message = reader.next("the message");
      assertEquals(RawWebSocket.TEXT, message.opcode());
      assertArrayEquals(text, message.payload(), "one byte per fragment arrives as one text message");
    }
  }

  @Test
  void binaryMessagesAreNeverInspected() throws Exception {
    String topic = newTopic();
    try (RawWebSocket reader = open(topic, "read");
        RawWebSocket writer = open(topic, "write")) {
      writer.send(RawWebSocket.BINARY, true, bytes(0xED, 0xA0, 0x80, 0xFF));
      assertArrayEquals(bytes(0xED, 0xA0, 0x80, 0xFF), reader.next("the binary message").payload());
    }
  }

  @Test
  void everyPingIsAnsweredInOrder() throws Exception {
    try (RawWebSocket socket = open(newTopic(), "read", "write")) {
      ByteArrayOutputStream pings = new ByteArrayOutputStream();
      for (int i = 0; i < 10; i++) {
        pings.writeBytes(RawWebSocket.frame(RawWebSocket.PING, true, ("ping " + i).getBytes(StandardCharsets.UTF_8)));
      }
      socket.sendRaw(pings.toByteArray());
      for (int i = 0; i < 10; i++) {
        RawWebSocket.Frame pong = socket.next("pong " + i);
        assertEquals(RawWebSocket.PONG, pong.opcode());
        assertEquals("ping " + i, pong.text(), "pongs come in the order of their pings");
      }
    }
  }

  @Test
  void closeFramesThatBreakTheRulesGet1002() throws Exception {
    byte[][] bodies = {
      bytes(0x03),
      RawWebSocket.closeBody(1000, bytes(0xCE, 0xBA, 0xE1, 0x80, 0x28)),
      RawWebSocket.closeBody(0, new byte[0]),
      RawWebSocket.closeBody(999, new byte[0]),
      RawWebSocket.closeBody(1004, new byte[0]),
      RawWebSocket.closeBody(1005, new byte[0]),
      RawWebSocket.closeBody(1006, new byte[0]),
      RawWebSocket.closeBody(1016, new byte[0]),
      RawWebSocket.closeBody(1100, new byte[0]),
      RawWebSocket.closeBody(2000, new byte[0]),
      RawWebSocket.closeBody(2999, new byte[0]),
      RawWebSocket.closeBody(5000, new byte[0]),
      RawWebSocket.closeBody(65535, new byte[0]),
    };
    for (byte[] body : bodies) {
      try (RawWebSocket socket = open(newTopic(), "read", "write")) {
        socket.send(RawWebSocket.CLOSE, true, body);
        assertFailedWith(1002, socket, "close body " + java.util.HexFormat.of().formatHex(body));
      }
    }
  }

  @Test
  void validClosesAreEchoedAndTheServerEndsTheConnection() throws Exception {
    int[][] sentAndEchoed = {{1000, 1000}, {1001, 1001}, {1011, 1011}, {3000, 3000}, {4999, 4999}, {-1, 1000}};
    for (int[] codes : sentAndEchoed) {
      try (RawWebSocket socket = open(newTopic(), "read", "write")) {
        socket.send(RawWebSocket.CLOSE, true, codes[0] < 0 ? new byte[0] : RawWebSocket.closeBody(codes[0], "bye".getBytes(StandardCharsets.UTF_8)));
        RawWebSocket.Frame echo = socket.next("the close answer");
        assertEquals(RawWebSocket.CLOSE, echo.opcode());
        assertEquals(codes[1], echo.closeCode(), "the answer to a close with " + codes[0]);
        assertEquals(RawWebSocket.End.CLOSED, socket.awaitEnd(PROMPTLY), "the server ends the TCP connection after the handshake");
      }
    }
  }

  @Test
  void protocolErrorsGet1002AndTheConnectionEndsWithoutWaitingForTheClient() throws Exception {
    Map<String, byte[]> errors =
        Map.of(
            "an RSV bit", RawWebSocket.frame(RawWebSocket.TEXT, true, 1, bytes('x')),
            "reserved opcode 3", RawWebSocket.frame(3, true, new byte[0]),
            "reserved control opcode 0xB", RawWebSocket.frame(0xB, true, new byte[0]),
            "an unmasked frame", bytes(0x81, 0x02, 'h', 'i'),
            "a fragmented ping", RawWebSocket.frame(RawWebSocket.PING, false, bytes('x')),
            "a ping of 126 bytes", RawWebSocket.frame(RawWebSocket.PING, true, new byte[126]),
            "a continuation outside a message", RawWebSocket.frame(RawWebSocket.CONTINUATION, true, bytes('x')),
            "a text frame inside a fragmented message",
                concat(RawWebSocket.frame(RawWebSocket.TEXT, false, bytes('a')), RawWebSocket.frame(RawWebSocket.TEXT, true, bytes('b'))));
    for (Map.Entry<String, byte[]> error : errors.entrySet()) {
      try (RawWebSocket socket = open(newTopic(), "read", "write")) {
        socket.sendRaw(error.getValue());
        assertFailedWith(1002, socket, error.getKey());
      }
    }
  }

  @Test
  void theClientsCloseAfterAProtocolErrorMeetsACleanEnd() throws Exception {
    try (RawWebSocket socket = open(newTopic(), "read", "write")) {
      socket.sendRaw(RawWebSocket.frame(RawWebSocket.BINARY, true, 2, bytes('x')));
      assertEquals(1002, socket.next("the close").closeCode());
      socket.send(RawWebSocket.CLOSE, true, RawWebSocket.closeBody(1002, new byte[0]));
      assertEquals(RawWebSocket.End.CLOSED, socket.awaitEnd(PROMPTLY), "a FIN, not a reset");
    }
  }

  /** Over TLS: in the same record as the upgrade request, read and decrypted with it. */
  @Test
  void framesInTheSameSegmentAsTheUpgradeRequestAreNotLost() throws Exception {
    String topic = newTopic();
    try (RawWebSocket reader = open(topic, "read");
        RawWebSocket writer = open(topic, RawWebSocket.frame(RawWebSocket.TEXT, true, "early".getBytes()), "write")) {
      assertEquals("early", reader.next("the frame sent with the upgrade request").text());
    }
  }

  @Test
  void aMessageOverTheLimitGets1009() throws Exception {
    try (RawWebSocket socket = open(newTopic(), "read", "write")) {
      socket.send(RawWebSocket.BINARY, false, new byte[40 * 1024]);
      socket.send(RawWebSocket.CONTINUATION, true, new byte[40 * 1024]);
      assertFailedWith(1009, socket, "80 KiB over a 64 KiB limit");
    }
  }

  @Test
  void anotherWebSocketVersionGets426NamingVersion13() throws Exception {
    String topic = newTopic();
    try (RawWebSocket socket = RawWebSocket.connect(access.relayUri(topic, Tokens.session(topic, "read")), tls, "8", new byte[0])) {
      assertTrue(socket.response.startsWith("HTTP/1.1 426 "), socket.response);
      assertTrue(socket.response.contains("\r\nSec-WebSocket-Version: 13\r\n"), socket.response);
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(a);
    out.writeBytes(b);
    return out.toByteArray();
  }
}
