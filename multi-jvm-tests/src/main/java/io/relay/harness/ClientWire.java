package io.relay.harness;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What the harness's WebSocket client puts on the wire and expects back (RFC 6455): the upgrade's
 * key and the accept value that answers it, masked final frames, a close frame's payload. Kept
 * apart from the server's own {@code Handshake}, so that the harness checks the node against an
 * independent reading of the RFC.
 */
final class ClientWire {
  private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

  private ClientWire() {}

  /** A fresh {@code Sec-WebSocket-Key}: 16 random bytes, base64 (section 4.1). */
  static String newKey() {
    byte[] nonce = new byte[16];
    ThreadLocalRandom.current().nextBytes(nonce);
    return Base64.getEncoder().encodeToString(nonce);
  }

  /** The {@code Sec-WebSocket-Accept} a server must answer {@code key} with (section 4.2.2). */
  static String accept(String key) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-1").digest((key + GUID).getBytes(StandardCharsets.ISO_8859_1));
      return Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-1", e);
    }
  }

  /** A final frame, masked with a random key as a client's must be (section 5.3). */
  static ByteBuffer masked(int opcode, byte[] payload) {
    int length = payload.length;
    ByteBuffer frame = ByteBuffer.allocate(14 + length);
    frame.put((byte) (0x80 | opcode));
    if (length < 126) {
      frame.put((byte) (0x80 | length));
    } else if (length < 65536) {
      frame.put((byte) (0x80 | 126)).putShort((short) length);
    } else {
      frame.put((byte) (0x80 | 127)).putLong(length);
    }
    byte[] mask = new byte[4];
    ThreadLocalRandom.current().nextBytes(mask);
    frame.put(mask);
    for (int i = 0; i < length; i++) {
      frame.put((byte) (payload[i] ^ mask[i & 3]));
    }
    return frame.flip();
  }

  /** A close frame's payload carrying {@code code} and no reason (section 5.5.1). */
  static byte[] closePayload(int code) {
    return new byte[] {(byte) (code >> 8), (byte) code};
  }
}
