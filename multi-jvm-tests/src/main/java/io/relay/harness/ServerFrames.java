package io.relay.harness;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The frames a relay sends the harness's client (RFC 6455 section 5.2), read from the start of
 * what the connection has received: each whole frame is unmasked if it is masked, a message's
 * continuations are joined, and the {@link Handler} hears each whole message, ping and close. A
 * frame not whole yet is left for the next read.
 */
final class ServerFrames {
  /** What the relay sent; each answer says whether the connection is still open to read on. */
  interface Handler {
    boolean onMessage(boolean text, byte[] message);

    boolean onPing(byte[] payload);

    /** A close, with its code (1005 when it carries none, section 7.4.1) and reason. */
    boolean onClose(int code, String reason);

    /** A frame longer than the client can hold: the connection is given up. */
    boolean onTooLong(long length);
  }

  /** The message being joined from its frames, and its opcode (1 text, 2 binary; 0 none). */
  private byte[] message = new byte[0];
  private int messageLength;
  private int messageOpcode;

  /** A new connection: no message under way. */
  void reset() {
    messageOpcode = 0;
    messageLength = 0;
  }

  /**
   * Handles every whole frame of {@code b[0, end)} while the handler reads on.
   *
   * @return the bytes of the frames handled
   */
  int read(byte[] b, int end, Handler handler) {
    int at = 0;
    boolean open = true;
    while (open && end - at >= 2) {
      boolean fin = (b[at] & 0x80) != 0;
      int opcode = b[at] & 0x0F;
      boolean masked = (b[at + 1] & 0x80) != 0;
      int len7 = b[at + 1] & 0x7F;
      int headerLength = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (masked ? 4 : 0);
      if (end - at < headerLength) {
        break;
      }
      long length = len7;
      if (len7 == 126) {
        length = ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
      } else if (len7 == 127) {
        length = 0;
        for (int i = 0; i < 8; i++) {
          length = (length << 8) | (b[at + 2 + i] & 0xFF);
        }
      }
      if (length > Integer.MAX_VALUE - headerLength) {
        handler.onTooLong(length);
        return at;
      }
      if (end - at < headerLength + length) {
        break;
      }
      int payload = at + headerLength;
      if (masked) {
        for (int i = 0; i < length; i++) {
          b[payload + i] ^= b[payload - 4 + (i & 3)];
        }
      }
      open = frame(fin, opcode, b, payload, (int) length, handler);
      at = payload + (int) length;
    }
    return at;
  }

  private boolean frame(boolean fin, int opcode, byte[] b, int from, int length, Handler handler) {
    switch (opcode) {
      case 0x0, 0x1, 0x2 -> {
        if (opcode != 0) {
          messageOpcode = opcode;
          messageLength = 0;
        }
        if (message.length < messageLength + length) {
          message = Arrays.copyOf(message, Math.max(message.length * 2, messageLength + length));
        }
        System.arraycopy(b, from, message, messageLength, length);
        messageLength += length;
        if (!fin) {
          return true;
        }
        boolean text = messageOpcode == 0x1;
        byte[] whole = Arrays.copyOf(message, messageLength);
        reset();
        return handler.onMessage(text, whole);
      }
      case 0x9 -> {
        return handler.onPing(Arrays.copyOfRange(b, from, from + length));
      }
      case 0x8 -> {
        int code = length >= 2 ? ((b[from] & 0xFF) << 8) | (b[from + 1] & 0xFF) : 1005;
        return handler.onClose(code, length > 2 ? new String(b, from + 2, length - 2, StandardCharsets.UTF_8) : "");
      }
      default -> {
        return true; // pong, or an opcode the relay never sends
      }
    }
  }
}
