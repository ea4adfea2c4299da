package io.relay.ws;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.relay.memory.BufferChecks;
import io.relay.memory.MemoryBudget;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.zip.CRC32;
import org.apache.pekko.util.ByteString;

/**
 * WebSocket framing as the server writes it (RFC 6455 section 5.2): opcodes, and frames rendered
 * once into the bytes that go on the wire.
 *
 * <p>A server frame is never masked, so one rendered frame is the same for every reader of a
 * topic: it is rendered once per message, into one pooled buffer, and every reader's channel
 * writes a duplicate of that buffer (its own indexes over the same bytes, no copy).
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

  /**
   * A frame the server makes itself (a ping, a pong, a close, a stats report): on the heap, never
   * counted, and never freed by its holders (the garbage collector takes it); one instance can go
   * to many peers.
   */
  public static Frame frame(byte opcode, ByteString payload) {
    int size = payload.length();
    ByteBuf buf = withHeader(Unpooled.wrappedBuffer(new byte[headerBytes(size) + size]).clear(), opcode, size);
    buf.writeBytes(payload.toArrayUnsafe(), 0, size);
    return new Frame(opcode, Unpooled.unreleasableBuffer(buf), size, false);
  }

  /**
   * A client's message as its readers get it: the {@code size} payload bytes of {@code bytes}
   * from {@code start}, copied after the frame's header into one pooled buffer from {@code
   * alloc}. The caller is its first holder ({@link Frame#share}, {@link Frame#release}).
   */
  public static Frame message(ByteBufAllocator alloc, byte opcode, byte[] bytes, int start, int size) {
    return built(opcode, frameBuffer(alloc, opcode, size).writeBytes(bytes, start, size), size);
  }

  /**
   * A client's message as its readers get it, from the {@code size} bytes of {@code bytes} from
   * index {@code start}, masked with {@code mask}: copied once, unmasked, after the frame's header
   * into one pooled buffer from {@code alloc}. The caller is its first holder.
   */
  public static Frame unmasked(ByteBufAllocator alloc, byte opcode, ByteBuf bytes, int start, int size, int mask) {
    ByteBuf buf = frameBuffer(alloc, opcode, size);
    Unmasker.copy(bytes, start, size, mask, 0, buf);
    return built(opcode, buf, size);
  }

  /**
   * A pooled buffer from {@code alloc} for a server frame of {@code size} payload bytes, its header
   * written: the payload is written after it, and the buffer made a frame with {@link #built}.
   */
  static ByteBuf frameBuffer(ByteBufAllocator alloc, byte opcode, int size) {
    return withHeader(alloc.directBuffer(headerBytes(size) + size), opcode, size);
  }

  /**
   * A client's message in {@code buf}, a {@link #frameBuffer} its {@code size} payload bytes were
   * written to. The caller is its first holder.
   */
  static Frame built(byte opcode, ByteBuf buf, int size) {
    return new Frame(opcode, buf, size, true);
  }

  /** {@code buf} with the header of a server frame of {@code size} payload bytes written to it. */
  private static ByteBuf withHeader(ByteBuf buf, byte opcode, int size) {
    buf.writeByte(0x80 | opcode);
    if (size < 126) {
      buf.writeByte(size);
    } else if (size < 1 << 16) {
      buf.writeByte(126);
      buf.writeShort(size);
    } else {
      buf.writeByte(127);
      buf.writeLong(size);
    }
    return buf;
  }

  /** The length of a server frame's header for a payload of {@code size} bytes. */
  static int headerBytes(int size) {
    return size < 126 ? 2 : size < 1 << 16 ? 4 : 10;
  }

  /** A close frame with a status code and a short reason. */
  public static Frame close(int code, String reason) {
    ByteString body =
        ByteString.fromArray(new byte[] {(byte) (code >> 8), (byte) code})
            .concat(ByteString.fromString(reason, StandardCharsets.UTF_8));
    return frame(CLOSE, body);
  }

  /**
   * One server frame, shared by every reader it is queued for.
   *
   * <p>A client's message ({@link #message}) is counted: its maker is its first holder, {@link
   * #share} adds one holder per reader it is offered to (and counts its payload once in the
   * node's {@link MemoryBudget}), and each holder lets go exactly once with {@link #release}: a
   * reader's queue when it drops or discards the frame, a reader's channel when it has written
   * the frame or failed to ({@link #operationComplete}). When the last lets go, the payload leaves
   * the budget and the pooled buffer goes back to its pool. Each write is of a {@link #forWrite
   * duplicate} that holds the buffer itself (Netty's reference count) until the channel is done
   * with it, so a holder that let go too early cannot free bytes a channel is still writing.
   * Frames the server makes itself are not counted, and letting go of them does nothing.
   *
   * <p>A holder letting go more often than it held, and a frame written after its last holder let
   * go, are faults ({@link BufferChecks}).
   */
  public static final class Frame implements ChannelFutureListener {
    private static final AtomicIntegerFieldUpdater<Frame> HOLDERS =
        AtomicIntegerFieldUpdater.newUpdater(Frame.class, "holders");

    private final byte opcode;
    private final ByteBuf wire;
    private final int payloadLength;
    private final boolean counted;
    private MemoryBudget budget;
    private volatile int holders;
    /** With {@link BufferChecks#ON}: where a holder last let go. */
    private volatile Throwable lastRelease;
    /** With {@link BufferChecks#ON}, for a counted frame: the CRC-32 of its wire bytes when made. */
    private long checksum;

    private Frame(byte opcode, ByteBuf wire, int payloadLength, boolean counted) {
      this.opcode = opcode;
      this.wire = wire;
      this.payloadLength = payloadLength;
      this.counted = counted;
      if (counted) {
        holders = 1;
        if (BufferChecks.ON) {
          checksum = checksum();
        }
      }
    }

    public byte opcode() {
      return opcode;
    }

    public int payloadLength() {
      return payloadLength;
    }

    /** The payload, as a view of the frame's buffer: read it only while holding the frame. */
    public ByteBuf payload() {
      return wire.slice(wire.readerIndex() + headerBytes(payloadLength), payloadLength);
    }

    /**
     * The frame's bytes for one channel to write: a duplicate that holds the buffer until the
     * channel has written or dropped it. Only while the frame is held.
     */
    public ByteBuf forWrite() {
      if (counted) {
        if (holders <= 0) {
          BufferChecks.fault("a frame was written after its last holder let go", lastRelease);
        }
        if (BufferChecks.ON && checksum() != checksum) {
          BufferChecks.fault("a frame's bytes changed while it was held", lastRelease);
        }
      }
      return wire.retainedDuplicate();
    }

    private long checksum() {
      CRC32 crc = new CRC32();
      crc.update(wire.nioBuffer());
      return crc.getValue();
    }

    /**
     * Adds {@code count} holders, the readers the frame is about to be offered to, and counts its
     * payload in {@code budget}; each must {@link #release} it once. Called at most once per
     * frame, by its maker, before it lets go itself.
     */
    public void share(MemoryBudget budget, int count) {
      if (counted && count > 0) {
        this.budget = budget;
        budget.charge(payloadLength);
        HOLDERS.addAndGet(this, count);
      }
    }

    /**
     * One holder lets go of the frame; the last gives its payload back to the budget and its
     * buffer to the pool.
     */
    public void release() {
      if (!counted) {
        return;
      }
      int left = HOLDERS.decrementAndGet(this);
      if (left < 0) {
        BufferChecks.fault("a frame was let go of more often than it was held", lastRelease);
        return;
      }
      if (BufferChecks.ON) {
        lastRelease = new Throwable("the holder before let go here");
      }
      if (left > 0) {
        return;
      }
      if (budget != null) {
        budget.release(payloadLength);
      }
      wire.release();
    }

    /** A channel's write of this frame ended, written or not: the channel lets go of it. */
    @Override
    public void operationComplete(ChannelFuture future) {
      release();
    }
  }
}
