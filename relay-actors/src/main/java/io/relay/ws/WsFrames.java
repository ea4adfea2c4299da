package io.relay.ws;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.zip.CRC32;
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

  /** The longest header of a server frame: two bytes and a 64-bit length. */
  public static final int MAX_HEADER_BYTES = 10;

  /** A whole, unmasked, final frame as the server sends it; one instance can go to many peers. */
  public static Frame frame(byte opcode, ByteString payload) {
    int size = payload.length();
    byte[] bytes = new byte[MAX_HEADER_BYTES + size];
    payload.copyToArray(bytes, MAX_HEADER_BYTES, size);
    return frame(opcode, bytes, MAX_HEADER_BYTES, size);
  }

  /**
   * A whole, unmasked, final frame around the {@code size} payload bytes of {@code bytes} from
   * {@code start}: its header ({@link #headerBytes}) is written into the bytes before them, so
   * the frame goes on the wire as one contiguous piece, without a copy. {@code bytes} must not
   * change afterwards.
   */
  public static Frame frame(byte opcode, byte[] bytes, int start, int size) {
    int headerBytes = headerBytes(size);
    int at = start - headerBytes;
    bytes[at] = (byte) (0x80 | opcode);
    if (size < 126) {
      bytes[at + 1] = (byte) size;
    } else if (size < 1 << 16) {
      bytes[at + 1] = 126;
      bytes[at + 2] = (byte) (size >> 8);
      bytes[at + 3] = (byte) size;
    } else {
      bytes[at + 1] = 127;
      for (int i = 0; i < 8; i++) {
        bytes[at + 9 - i] = (byte) ((long) size >> (8 * i));
      }
    }
    return new Frame(
        opcode, ByteString.fromArrayUnsafe(bytes, at, headerBytes + size), ByteString.fromArrayUnsafe(bytes, start, size));
  }

  /** The length of a server frame's header for a payload of {@code size} bytes. */
  public static int headerBytes(int size) {
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
   * <p>A relayed message's frame is counted: {@link #share} adds one holder per reader it is
   * offered to (and counts its payload once in the node's {@link MemoryBudget}), and each holder
   * lets go exactly once, with {@link #release} (dropped, discarded or written) or {@link #abandon}.
   * When the last lets go, the payload leaves the budget. Control frames are never counted, and
   * letting go of them does nothing.
   *
   * <p>A frame made in the array its message was read into ({@link #inReadArray}) gives that array
   * back to {@link ReadArrays} when its last holder lets go. The stage reading that array is a
   * holder too, until it has read the rest of the read ({@link #inReadArray}): the frame's readers
   * may all be written and let go before the stage has read the next message out of the same
   * array. Each holder must let go only once nothing will read the bytes for it again; a holder
   * that cannot be sure of that (a socket that may still be writing them) lets go with {@link
   * #abandon}, and the array is then left to the garbage collector. A holder letting go more often
   * than it held, and a frame's wire bytes asked for after its last holder let go, are faults
   * ({@link BufferChecks}).
   */
  public static final class Frame {
    private static final AtomicIntegerFieldUpdater<Frame> HOLDERS =
        AtomicIntegerFieldUpdater.newUpdater(Frame.class, "holders");

    private final byte opcode;
    private final ByteString wire;
    private final ByteString payload;
    /** For what is left of a partly written frame: that frame; otherwise null. */
    private final Frame whole;
    /** Whether holders are counted: the frame was shared or made in a read's array. */
    private boolean counted;
    private MemoryBudget budget;
    private volatile int holders;
    /** The array to give back to {@link ReadArrays} when the last holder lets go, or null. */
    private byte[] reusable;
    /** A holder let go while its socket might still write the bytes: the array is not reused. */
    private volatile boolean abandoned;
    /** With {@link BufferChecks#ON}: where a holder last let go. */
    private volatile Throwable lastRelease;
    /** With {@link BufferChecks#ON}, for a counted frame: the CRC-32 of its payload when it was first held. */
    private long checksum;

    /**
     * @param wire the frame as it goes on the wire: header and payload
     * @param payload the payload alone (the same bytes as the end of {@code wire})
     */
    Frame(byte opcode, ByteString wire, ByteString payload) {
      this(opcode, wire, payload, null);
    }

    private Frame(byte opcode, ByteString wire, ByteString payload, Frame whole) {
      this.opcode = opcode;
      this.wire = wire;
      this.payload = payload;
      this.whole = whole;
    }

    /**
     * What is left to send of this frame once the socket took its first {@code written} wire
     * bytes: the rest of the wire bytes, still held as this frame (releasing it releases this one).
     */
    public Frame rest(int written) {
      return new Frame(opcode, wire.drop(written), payload, this);
    }

    /** Whether this is what was left of a frame partly written (see {@link #rest}). */
    public boolean isRest() {
      return whole != null;
    }

    public byte opcode() {
      return opcode;
    }

    public int payloadLength() {
      return payload.size();
    }

    /** The frame's bytes as they go on the wire; only while it is held. */
    public ByteString wire() {
      Frame counting = whole != null ? whole : this;
      if (counting.counted && counting.holders <= 0) {
        BufferChecks.fault("a frame's bytes were asked for after its last holder let go", counting.lastRelease);
      }
      if (BufferChecks.ON && counting.counted && checksum(counting.payload) != counting.checksum) {
        BufferChecks.fault("a frame's bytes changed while it was held", counting.lastRelease);
      }
      return wire;
    }

    public ByteString payload() {
      return payload;
    }

    public boolean isClose() {
      return opcode == CLOSE;
    }

    /**
     * The frame's bytes are in {@code array}, taken from {@link ReadArrays}, whose read the caller
     * is still reading: the caller becomes the frame's first holder, and lets go with {@link
     * #release} once it has read the rest of that read. The array goes back to the pool when the
     * last holder lets go. Called before the frame is shared.
     */
    public void inReadArray(byte[] array) {
      reusable = array;
      countFrom();
      HOLDERS.incrementAndGet(this);
    }

    /**
     * Adds {@code count} holders, the readers the frame is about to be offered to, and counts its
     * payload in {@code budget}; each must {@link #release} it once. Called once per frame, by the
     * writer's stream.
     */
    public void share(MemoryBudget budget, int count) {
      if (count > 0) {
        this.budget = budget;
        countFrom();
        budget.charge(payload.size());
        HOLDERS.addAndGet(this, count);
      }
    }

    /** Starts counting holders; with {@link BufferChecks#ON}, notes what the payload is. */
    private void countFrom() {
      if (!counted) {
        counted = true;
        if (BufferChecks.ON) {
          checksum = checksum(payload);
        }
      }
    }

    private static long checksum(ByteString bytes) {
      CRC32 crc = new CRC32();
      crc.update(bytes.asByteBuffer());
      return crc.getValue();
    }

    /**
     * One holder lets go of the frame, and nothing will read its bytes for that holder again; the
     * last gives its payload back to the budget, and its array to {@link ReadArrays} if it has one
     * and no holder {@link #abandon}ed it.
     */
    public void release() {
      if (whole != null) {
        whole.release();
        return;
      }
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
        budget.release(payload.size());
      }
      if (reusable != null && !abandoned) {
        ReadArrays.giveBack(reusable);
      }
    }

    /**
     * One holder lets go of the frame while its socket may still write the bytes (a socket that
     * asks for the next frame before it has written the last, or a connection that ends with a
     * frame handed to its socket): counted like {@link #release}, but the array is not reused.
     */
    public void abandon() {
      if (whole != null) {
        whole.abandon();
      } else {
        abandoned = true;
        release();
      }
    }
  }
}
