package io.relay.ws;

import org.apache.pekko.util.ByteString;

/**
 * Splits the bytes a client sends into WebSocket frames (RFC 6455 section 5.2), whatever the
 * boundaries of the reads they arrive in: a header may be split across reads, a payload is handed
 * on in the pieces it arrived in, still masked, without being copied.
 */
public final class FrameReader {
  /** What the reader found. */
  public interface Handler {
    /**
     * The header of the next frame.
     *
     * @param rsv the three extension bits, as the low bits of an int
     * @param mask the masking key as a big-endian int (meaningful only when {@code masked})
     * @param length the payload length, or -1 when the header encodes a length of 2^63 or more
     * @return false to stop reading: the rest of the bytes are ignored
     */
    boolean onHeader(byte opcode, boolean fin, int rsv, boolean masked, int mask, long length);

    /**
     * A piece of the current frame's payload, as it arrived (still masked); {@code last} marks the
     * frame's end. A frame with an empty payload has one call with an empty piece.
     *
     * @return false to stop reading: the rest of the bytes are ignored
     */
    boolean onPayload(ByteString piece, boolean last);
  }

  /** Bytes of a header that is not complete yet. */
  private ByteString header = ByteString.emptyByteString();
  /** Payload bytes of the current frame still to come, or -1 between frames. */
  private long payloadLeft = -1;

  /**
   * Reads the next bytes of the connection.
   *
   * @return false when the handler asked to stop
   */
  public boolean read(ByteString bytes, Handler handler) {
    ByteString data = bytes;
    while (true) {
      if (payloadLeft < 0) {
        if (data.isEmpty()) {
          return true;
        }
        ByteString buffered = header.isEmpty() ? data : header.concat(data);
        int headerLength = headerLength(buffered);
        if (headerLength < 0 || buffered.length() < headerLength) {
          header = buffered.compact();
          return true;
        }
        header = ByteString.emptyByteString();
        if (!onHeader(buffered, handler)) {
          return false;
        }
        data = buffered.drop(headerLength);
        if (payloadLeft == 0) {
          payloadLeft = -1;
          if (!handler.onPayload(ByteString.emptyByteString(), true)) {
            return false;
          }
        }
      } else {
        if (data.isEmpty()) {
          return true;
        }
        int n = (int) Math.min(payloadLeft, data.length());
        payloadLeft -= n;
        boolean last = payloadLeft == 0;
        ByteString piece = n == data.length() ? data : data.take(n);
        data = n == data.length() ? ByteString.emptyByteString() : data.drop(n);
        if (last) {
          payloadLeft = -1;
        }
        if (!handler.onPayload(piece, last)) {
          return false;
        }
      }
    }
  }

  /** The length of the header at the start of {@code bytes}, or -1 if too few bytes say yet. */
  private static int headerLength(ByteString bytes) {
    if (bytes.length() < 2) {
      return -1;
    }
    int second = bytes.apply(1) & 0xFF;
    int length7 = second & 0x7F;
    int extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0;
    return 2 + extended + ((second & 0x80) != 0 ? 4 : 0);
  }

  private boolean onHeader(ByteString bytes, Handler handler) {
    int first = bytes.apply(0) & 0xFF;
    int second = bytes.apply(1) & 0xFF;
    boolean masked = (second & 0x80) != 0;
    int length7 = second & 0x7F;
    int at = 2;
    long length;
    if (length7 == 126) {
      length = ((bytes.apply(2) & 0xFFL) << 8) | (bytes.apply(3) & 0xFFL);
      at = 4;
    } else if (length7 == 127) {
      length = 0;
      for (int i = 0; i < 8; i++) {
        length = (length << 8) | (bytes.apply(2 + i) & 0xFFL);
      }
      at = 10;
    } else {
      length = length7;
    }
    int mask = 0;
    if (masked) {
      for (int i = 0; i < 4; i++) {
        mask = (mask << 8) | (bytes.apply(at + i) & 0xFF);
      }
    }
    payloadLeft = Math.max(length, 0);
    return handler.onHeader(
        (byte) (first & 0x0F), (first & 0x80) != 0, (first >> 4) & 0x7, masked, mask, length < 0 ? -1 : length);
  }
}
