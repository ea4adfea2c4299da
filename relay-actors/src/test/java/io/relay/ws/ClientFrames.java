package io.relay.ws;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/** Frames as a client writes them (RFC 6455 section 5.2), masked unless asked otherwise. */
public final class ClientFrames {
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

  public ClientFrames frame(int opcode, boolean fin, byte[] payload) {
    return frame(opcode, fin, 0, true, payload);
  }

  public ClientFrames text(String text) {
    return frame(WsFrames.TEXT, true, text.getBytes(StandardCharsets.UTF_8));
  }

  public ClientFrames close(int code, byte[] reason) {
    byte[] body = new byte[2 + reason.length];
    body[0] = (byte) (code >> 8);
    body[1] = (byte) code;
    System.arraycopy(reason, 0, body, 2, reason.length);
    return frame(WsFrames.CLOSE, true, body);
  }

  /** Any frame, including ones that break the rules. */
  public ClientFrames frame(int opcode, boolean fin, int rsv, boolean masked, byte[] payload) {
    bytes.write((fin ? 0x80 : 0) | (rsv << 4) | opcode);
    int maskBit = masked ? 0x80 : 0;
    int length = payload.length;
    if (length < 126) {
      bytes.write(maskBit | length);
    } else if (length < 65_536) {
      bytes.write(maskBit | 126);
      bytes.write(length >> 8);
      bytes.write(length);
    } else {
      bytes.write(maskBit | 127);
      for (int i = 7; i >= 0; i--) {
        bytes.write((int) ((long) length >> (8 * i)));
      }
    }
    byte[] mask = new byte[4];
    if (masked) {
      ThreadLocalRandom.current().nextBytes(mask);
      bytes.writeBytes(mask);
    }
    for (int i = 0; i < length; i++) {
      bytes.write(payload[i] ^ mask[i & 3]);
    }
    return this;
  }

  /** Raw bytes, for headers no well-behaved encoder writes. */
  public ClientFrames raw(int... values) {
    for (int value : values) {
      bytes.write(value);
    }
    return this;
  }

  public byte[] bytes() {
    return bytes.toByteArray();
  }
}
