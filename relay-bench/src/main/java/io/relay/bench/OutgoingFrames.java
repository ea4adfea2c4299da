package io.relay.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * What a load-generator connection has still to write, in order, written with gathering writes of
 * up to {@value #MAX_BUFFERS} buffers at a time. Client frames are masked with the all-zero key
 * (legal, and the server does the same unmasking work for any key), so a frame needs no XOR pass:
 * it is a small header buffer and its payload, a benchmark message's a shared, read-only filler,
 * never copied into one.
 */
final class OutgoingFrames {
  private static final int MAX_BUFFERS = 64;

  private final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>();
  private final ByteBuffer[] gather = new ByteBuffer[MAX_BUFFERS];
  private long bytes;

  /** A final frame's header, masked with the all-zero key, with room for {@code extra} more bytes. */
  static ByteBuffer header(int opcode, int length, int extra) {
    ByteBuffer b = ByteBuffer.allocate(14 + extra);
    b.put((byte) (0x80 | opcode));
    if (length < 126) {
      b.put((byte) (0x80 | length));
    } else if (length < 65536) {
      b.put((byte) (0x80 | 126)).putShort((short) length);
    } else {
      b.put((byte) (0x80 | 127)).putLong(length);
    }
    return b.putInt(0);
  }

  /** A control frame (a pong, a close) carrying {@code payload}. */
  void frame(int opcode, byte[] payload) {
    add(header(opcode, payload.length, 0).flip(), ByteBuffer.wrap(payload));
  }

  void add(ByteBuffer buffer) {
    pending.add(buffer);
    bytes += buffer.remaining();
  }

  /** A frame: its header, then its payload. */
  void add(ByteBuffer header, ByteBuffer payload) {
    add(header);
    add(payload);
  }

  boolean isEmpty() {
    return pending.isEmpty();
  }

  /** Bytes waiting to be written. */
  long bytes() {
    return bytes;
  }

  /**
   * Writes until {@code to} takes no more. A TLS channel may throw tls-channel's {@code
   * WouldBlockException} when it cannot go on without the socket: nothing was written then.
   */
  void writeTo(GatheringByteChannel to) throws IOException {
    while (!pending.isEmpty()) {
      int count = 0;
      for (ByteBuffer b : pending) {
        gather[count++] = b;
        if (count == MAX_BUFFERS) {
          break;
        }
      }
      long n;
      try {
        n = to.write(gather, 0, count);
      } finally {
        Arrays.fill(gather, 0, count, null);
      }
      bytes -= n;
      while (!pending.isEmpty() && !pending.peekFirst().hasRemaining()) {
        pending.pollFirst();
      }
      if (n == 0 || (!pending.isEmpty() && count < MAX_BUFFERS)) {
        return;
      }
    }
  }
}
