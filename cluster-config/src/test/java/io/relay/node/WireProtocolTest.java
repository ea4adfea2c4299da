package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Tokens;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The relay's WebSocket protocol on the wire, driven by a client written against RFC 6455 over a
 * plain socket: what browsers and other clients may send that the JDK's client never does
 * (fragments, pings between fragments, headers split across TCP segments, 64-bit lengths,
 * protocol errors), and the handshake answer itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WireProtocolTest {
  @AutoClose private final TestNode node = TestNode.start(Map.of("relay.max-message-bytes", "256KiB"));
  private final AccessClient access = new AccessClient(node);

  @Test
  void handshakeAnswersTheKeyAndTheNullSubprotocol() throws Exception {
    try (RawWebSocket raw = RawWebSocket.connect(access.relayUri("wire/hello", Tokens.session("wire/hello", "read", "write")))) {
      String expected =
          Base64.getEncoder()
              .encodeToString(
                  MessageDigest.getInstance("SHA-1")
                      .digest((raw.key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.US_ASCII)));
      assertTrue(raw.response.startsWith("HTTP/1.1 101 "), raw.response);
      assertTrue(raw.response.contains("\r\nSec-WebSocket-Accept: " + expected + "\r\n"), raw.response);
      assertTrue(raw.response.toLowerCase().contains("\r\nupgrade: websocket\r\n"), raw.response);
      assertTrue(raw.response.contains("\r\nSec-WebSocket-Protocol: null\r\n"), raw.response);
    }
  }

  @Test
  void fragmentsSplitAcrossSegmentsWithAPingBetweenArriveAsOneMessage() throws Exception {
    try (RawWebSocket raw = RawWebSocket.connect(access.relayUri("wire/frag", Tokens.session("wire/frag", "read", "write")));
        Participant reader = Participant.connect(access.relayUri("wire/frag", Tokens.session("wire/frag", "read")))) {
      raw.sendByteByByte(0x01, false, "hello ".getBytes(StandardCharsets.UTF_8));
      raw.sendByteByByte(0x09, true, "are you there".getBytes(StandardCharsets.UTF_8));
      raw.sendByteByByte(0x00, false, "fragmented ".getBytes(StandardCharsets.UTF_8));
      raw.sendByteByByte(0x00, true, "world".getBytes(StandardCharsets.UTF_8));

      RawWebSocket.Frame pong = raw.next();
      assertEquals(0x0A, pong.opcode(), "a ping between fragments is answered with a pong");
      assertEquals("are you there", new String(pong.payload(), StandardCharsets.UTF_8), "the pong carries the ping's payload");
      Participant.Frame message = reader.next();
      assertTrue(message.text());
      assertEquals("hello fragmented world", message.asText(), "the fragments arrive as one text message");
    }
  }

  @Test
  void emptyAndLargeMessagesWithEveryLengthEncodingArriveWhole() throws Exception {
    try (RawWebSocket raw = RawWebSocket.connect(access.relayUri("wire/large", Tokens.session("wire/large", "read", "write")));
        Participant other = Participant.connect(access.relayUri("wire/large", Tokens.session("wire/large", "read", "write")))) {
      for (int size : new int[] {0, 125, 126, 65_535, 65_536, 200_000}) {
        byte[] payload = new byte[size];
        ThreadLocalRandom.current().nextBytes(payload);
        raw.send(0x02, true, payload);
        Participant.Frame received = other.next();
        assertArrayEquals(payload, received.data(), "a binary message of " + size + " bytes arrives unchanged");

        other.sendBinary(payload);
        RawWebSocket.Frame back = raw.next();
        assertEquals(0x02, back.opcode());
        assertArrayEquals(payload, back.payload(), "the server frames " + size + " bytes with the right length encoding");
      }
    }
  }

  @Test
  void anUnmaskedFrameIsAProtocolError() throws Exception {
    try (RawWebSocket raw = RawWebSocket.connect(access.relayUri("wire/unmasked", Tokens.session("wire/unmasked", "read", "write")))) {
      raw.out.write(new byte[] {(byte) 0x81, 0x02, 'h', 'i'});
      raw.out.flush();
      RawWebSocket.Frame close = raw.next();
      assertEquals(0x08, close.opcode(), "the server closes the connection");
      assertEquals(1002, close.closeCode());
    }
  }

  @Test
  void aClientCloseIsEchoedAndTheConnectionEnds() throws Exception {
    try (RawWebSocket raw = RawWebSocket.connect(access.relayUri("wire/close", Tokens.session("wire/close", "read", "write")))) {
      raw.send(0x08, true, new byte[] {0x03, (byte) 0xE8});
      RawWebSocket.Frame close = raw.next();
      assertEquals(0x08, close.opcode());
      assertEquals(1000, close.closeCode(), "the close code is echoed");
      assertEquals(-1, raw.in.read(), "the server then closes the TCP connection");
    }
  }
}
