package io.relay.ws;

import java.nio.charset.StandardCharsets;
import org.apache.pekko.http.impl.engine.ws.FrameHeader;
import org.apache.pekko.http.impl.engine.ws.FrameStart;
import org.apache.pekko.http.impl.engine.ws.Protocol;
import org.apache.pekko.util.ByteString;
import scala.Option;

/**
 * The one place that touches Pekko HTTP's frame-level WebSocket model.
 *
 * <p>Pekko HTTP's public message API can only close with 1000 or 1011, but this relay must send
 * 1001, 1009, 4000, 4001 and 4003. Its frame-level handler ({@code handleFrames}) is internal API,
 * stable across the 1.x line but not promised: everything that depends on it is here and in {@link
 * ConnectionStage}, and the end-to-end tests exercise it with a real client.
 */
public final class WsFrames {
  /** Opcodes of RFC 6455 section 5.2. */
  public static final byte CONTINUATION = 0x0;

  public static final byte TEXT = 0x1;
  public static final byte BINARY = 0x2;
  public static final byte CLOSE = 0x8;
  public static final byte PING = 0x9;
  public static final byte PONG = 0xA;

  private static final Option<Object> NO_MASK = Option.empty();

  private WsFrames() {}

  /** A whole, unmasked, final frame as the server sends it; one instance can go to many peers. */
  public static FrameStart frame(byte opcode, ByteString payload) {
    return new FrameStart(
        new FrameHeader(opcode(opcode), NO_MASK, payload.length(), true, false, false, false),
        payload);
  }

  /** A close frame with a status code and a short reason. */
  public static FrameStart close(int code, String reason) {
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

  /** The masking key of a client frame, or empty when the client did not mask (a protocol error). */
  public static java.util.OptionalInt maskOf(FrameHeader header) {
    Option<Object> mask = header.mask();
    return mask.isDefined()
        ? java.util.OptionalInt.of((Integer) mask.get())
        : java.util.OptionalInt.empty();
  }

  private static Protocol.Opcode opcode(byte code) {
    return Protocol.Opcode$.MODULE$.forCode(code);
  }
}
