package io.relay.ws;

import io.netty.buffer.ByteBuf;

/**
 * Splits the bytes a client sends into WebSocket frames (RFC 6455 section 5.2), whatever the
 * boundaries of the reads they arrive in: a header may be split across reads, a payload is handed
 * on in the pieces it arrived in, still masked, for the handler to copy out.
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
     * A piece of the current frame's payload, still masked: the bytes of {@code bytes} from
     * index {@code start}, {@code length} long, to be copied out during the call. {@code last} marks the
     * frame's end; a frame with an empty payload has one call with an empty piece.
     *
     * @return false to stop reading: the rest of the bytes are ignored
     */
    boolean onPayload(ByteBuf bytes, int start, int length, boolean last);
  }

  private static final int MAX_HEADER = 14;

  /** The start of a header that is not complete yet, {@code headerHave} bytes of it. */
  private final byte[] header = new byte[MAX_HEADER];
  private int headerHave;
  /** Payload bytes of the current frame still to come, or -1 between frames. */
  private long payloadLeft = -1;

  /**
   * Reads the readable bytes of {@code bytes}, the next the connection received, moving its reader
   * index past what it read.
   *
   * @return false when the handler asked to stop
   */
  public boolean read(ByteBuf bytes, Handler handler) {
    while (true) {
      int at = bytes.readerIndex();
      int available = bytes.readableBytes();
      if (payloadLeft < 0) {
        if (headerHave == 0 && available >= 2 && available >= headerLength(bytes.getByte(at + 1))) {
          // the usual case: the whole header lies in this read
          bytes.readBytes(header, 0, headerLength(bytes.getByte(at + 1)));
        } else {
          // gather the header across reads: two bytes tell its length
          if (available == 0) {
            return true;
          }
          int need = headerHave < 2 ? 2 : headerLength(header[1]);
          int take = Math.min(available, need - headerHave);
          bytes.readBytes(header, headerHave, take);
          headerHave += take;
          if (headerHave < 2 || headerHave < headerLength(header[1])) {
            continue;
          }
        }
        headerHave = 0;
        if (!onHeader(handler)) {
          return false;
        }
        if (payloadLeft == 0) {
          payloadLeft = -1;
          if (!handler.onPayload(bytes, bytes.readerIndex(), 0, true)) {
            return false;
          }
        }
      } else {
        if (available == 0) {
          return true;
        }
        int n = (int) Math.min(payloadLeft, available);
        payloadLeft -= n;
        boolean last = payloadLeft == 0;
        if (last) {
          payloadLeft = -1;
        }
        boolean goOn = handler.onPayload(bytes, at, n, last);
        bytes.skipBytes(n);
        if (!goOn) {
          return false;
        }
      }
    }
  }

  /** The length of a header whose second byte is {@code second}. */
  private static int headerLength(byte second) {
    int length7 = second & 0x7F;
    int extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0;
    return 2 + extended + ((second & 0x80) != 0 ? 4 : 0);
  }

  private boolean onHeader(Handler handler) {
    int first = header[0] & 0xFF;
    int second = header[1] & 0xFF;
    boolean masked = (second & 0x80) != 0;
    int length7 = second & 0x7F;
    int at = 2;
    long length;
    if (length7 == 126) {
      length = ((header[2] & 0xFFL) << 8) | (header[3] & 0xFFL);
      at = 4;
    } else if (length7 == 127) {
      length = 0;
      for (int i = 0; i < 8; i++) {
        length = (length << 8) | (header[2 + i] & 0xFFL);
      }
      at = 10;
    } else {
      length = length7;
    }
    int mask = 0;
    if (masked) {
      for (int i = 0; i < 4; i++) {
        mask = (mask << 8) | (header[at + i] & 0xFF);
      }
    }
    payloadLeft = Math.max(length, 0);
    return handler.onHeader(
        (byte) (first & 0x0F), (first & 0x80) != 0, (first >> 4) & 0x7, masked, mask, length < 0 ? -1 : length);
  }
}
