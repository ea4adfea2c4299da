package io.relay.ws;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

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

  /** The longest header: two bytes, a 64-bit length and the masking key. */
  private static final int MAX_HEADER = 14;

  /**
   * A header split across reads, as far as it has arrived; made the first time a header is split,
   * so that a connection whose headers all arrive whole (most) holds none.
   */
  private ByteBuf split;
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
      if (payloadLeft < 0) {
        ByteBuf header = header(bytes);
        if (header == null) {
          return true;
        }
        if (!onHeader(header, handler)) {
          return false;
        }
      } else {
        // an empty payload is one empty piece
        int n = (int) Math.min(payloadLeft, bytes.readableBytes());
        if (n == 0 && payloadLeft > 0) {
          return true;
        }
        payloadLeft -= n;
        boolean last = payloadLeft == 0;
        if (last) {
          payloadLeft = -1;
        }
        boolean goOn = handler.onPayload(bytes, bytes.readerIndex(), n, last);
        bytes.skipBytes(n);
        if (!goOn) {
          return false;
        }
      }
    }
  }

  /**
   * Where the next header can be read whole: {@code bytes} itself when the whole header lies in
   * it (the usual case), else the header gathered across reads; null while it has not all arrived.
   */
  private ByteBuf header(ByteBuf bytes) {
    if (split == null || !split.isReadable()) {
      int available = bytes.readableBytes();
      if (available >= 2 && available >= headerLength(bytes.getByte(bytes.readerIndex() + 1))) {
        return bytes;
      }
      if (available == 0) {
        return null;
      }
      if (split == null) {
        split = Unpooled.wrappedBuffer(new byte[MAX_HEADER]).clear();
      }
    }
    while (true) {
      // its first two bytes tell its length
      int need = split.readableBytes() < 2 ? 2 : headerLength(split.getByte(1));
      if (split.readableBytes() == need) {
        return split;
      }
      if (!bytes.isReadable()) {
        return null;
      }
      split.writeBytes(bytes, Math.min(bytes.readableBytes(), need - split.readableBytes()));
    }
  }

  /** The length of a header whose second byte is {@code second}. */
  private static int headerLength(byte second) {
    int length7 = second & 0x7F;
    int extended = length7 == 126 ? 2 : length7 == 127 ? 8 : 0;
    return 2 + extended + ((second & 0x80) != 0 ? 4 : 0);
  }

  /** Reads the header at {@code header}'s reader index and tells the handler. */
  private boolean onHeader(ByteBuf header, Handler handler) {
    int first = header.readUnsignedByte();
    int second = header.readUnsignedByte();
    boolean masked = (second & 0x80) != 0;
    int length7 = second & 0x7F;
    long length = length7 == 126 ? header.readUnsignedShort() : length7 == 127 ? header.readLong() : length7;
    int mask = masked ? header.readInt() : 0;
    if (header == split) {
      split.clear(); // read whole: empty again before the handler hears of it
    }
    payloadLeft = Math.max(length, 0);
    return handler.onHeader(
        (byte) (first & 0x0F), (first & 0x80) != 0, (first >> 4) & 0x7, masked, mask, length < 0 ? -1 : length);
  }
}
