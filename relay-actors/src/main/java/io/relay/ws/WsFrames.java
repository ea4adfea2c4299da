package io.relay.ws;

import java.nio.charset.StandardCharsets;
import org.apache.pekko.util.ByteString;

/**
 * WebSocket framing as the server writes it (RFC 6455 section 5.2): opcodes, and frames rendered
 * once into the bytes that go on the wire.
 *
 * <p>A server frame is never masked, so one rendered frame is the same for every reader of a
 * topic: it is rendered once per message, and every reader's connection writes the same bytes.
 */
public final class WsFrames {
  /** Opcodes of RFC 6455 section 5.2. */
  public static final byte CONTINUATION = 0x0;

  public static final byte TEXT = 0x1;
  public static final byte BINARY = 0x2;
  public static final byte CLOSE = 0x8;
  public static final byte PING = 0x9;
  public static final byte PONG = 0xA;

  private WsFrames() {}

  /** A whole, unmasked, final frame as the server sends it; one instance can go to many peers. */
  public static Frame frame(byte opcode, ByteString payload) {
    int length = payload.length();
    byte[] header;
    if (length < 126) {
      header = new byte[] {(byte) (0x80 | opcode), (byte) length};
    } else if (length < 1 << 16) {
      header = new byte[] {(byte) (0x80 | opcode), 126, (byte) (length >> 8), (byte) length};
    } else {
      header = new byte[10];
      header[0] = (byte) (0x80 | opcode);
      header[1] = 127;
      for (int i = 0; i < 8; i++) {
        header[9 - i] = (byte) ((long) length >> (8 * i));
      }
    }
    return new Frame(opcode, length, ByteString.fromArrayUnsafe(header).concat(payload), payload);
  }

  /** A close frame with a status code and a short reason. */
  public static Frame close(int code, String reason) {
    ByteString body =
        ByteString.fromArray(new byte[] {(byte) (code >> 8), (byte) code})
            .concat(ByteString.fromString(reason, StandardCharsets.UTF_8));
    return frame(CLOSE, body);
  }

  /** The status code a peer's close frame carries, or 1005 (none) when it carries none. */
  public static int closeCode(ByteString payload) {
    if (payload.length() < 2) {
      return 1005;
    }
    return ((payload.apply(0) & 0xFF) << 8) | (payload.apply(1) & 0xFF);
  }

  /**
   * One server frame.
   *
   * @param opcode its opcode
   * @param payloadLength the length of its payload
   * @param wire the frame as it goes on the wire: header and payload
   * @param payload the payload alone (the same bytes as the end of {@code wire})
   */
  public record Frame(byte opcode, int payloadLength, ByteString wire, ByteString payload) {
    public boolean isClose() {
      return opcode == CLOSE;
    }
  }
}
