package io.relay.ws;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.relay.ws.WsFrames.Frame;
import io.relay.memory.MemoryBudget;
import java.util.Arrays;

/**
 * What a client sends on a WebSocket connection, read as RFC 6455 has a server read it: the frames
 * {@link FrameReader} splits are checked against the rules of the protocol, unmasked and assembled
 * into whole messages, and the {@link Listener} hears each message, ping and close, or the first
 * rule the client broke.
 *
 * <ul>
 *   <li>Section 5.1: client frames are masked. Section 5.2: no extension was negotiated, so the
 *       RSV bits are 0; opcodes 3-7 and 0xB-0xF are reserved; the most significant bit of a
 *       64-bit length is 0.
 *   <li>Section 5.4: a message is a text or binary frame and the continuation frames after it, up
 *       to one with FIN; control frames may come between them; a new message may not start inside
 *       another, nor a continuation outside one.
 *   <li>Section 5.5: control frames carry at most 125 bytes and are never fragmented.
 *   <li>Section 8.1: a text message is valid UTF-8, checked as its bytes arrive, so an invalid one
 *       fails at its first bad byte; binary messages are never inspected.
 *   <li>A message larger than the configured limit fails when the frame header that would take
 *       it past the limit arrives, before its bytes are held.
 * </ul>
 *
 * <p>A binary message of one frame is copied once, unmasked on the way, into the frame it is
 * relayed in ({@link WsFrames.Frame}, a pooled buffer, the server's header first): at once when it
 * arrives whole within one read, else piece by piece as its reads arrive, when the frame is no
 * more than 64 KiB longer than its first piece. Any other message's payload is copied out of the
 * reads it arrives in and unmasked into an array of its own, where a text message's UTF-8 is
 * checked as it arrives. The frame or array of a message that arrives over several reads is
 * counted in the node's {@link MemoryBudget} until the message is handed on or dropped. Breaking a rule or a close from the client ends the reading: bytes after
 * that are not read.
 */
public final class InboundProtocol implements FrameReader.Handler {
  /** How far ahead of the bytes that arrived a message's array may be made room for. */
  private static final int AHEAD = 64 * 1024;

  private static final int NO_MESSAGE = -1;
  private static final byte[] NO_BYTES = new byte[0];

  /** What the client said. */
  public interface Listener {
    /**
     * A whole message. Its payload is {@code bytes} from {@code start}, {@code size} long, the
     * message's own, never read or written by the protocol again. {@code bytes} is null when
     * messages are not kept (they are only counted).
     */
    void onMessage(byte opcode, byte[] bytes, int start, int size);

    /**
     * A whole binary message of one frame, in the frame it is relayed in: unmasked, after the
     * server's header, in a pooled buffer. The listener is its first holder and lets go of it
     * ({@link WsFrames.Frame#release}).
     */
    void onFrame(WsFrames.Frame frame);

    /** A ping, to be answered with a pong carrying {@code payload}. */
    void onPing(byte[] payload);

    /** A valid close frame: the client's last frame. */
    void onClose(CloseFrame close);

    /** The client broke a rule: fail the connection with {@code closeCode}. */
    void onViolation(int closeCode, String reason);
  }

  private final FrameReader reader = new FrameReader();
  private final Listener listener;
  private final long maxMessageBytes;
  private final MemoryBudget budget;
  private final Utf8Validator utf8 = new Utf8Validator();
  /** Whether messages are assembled and handed on, or only checked and counted. */
  private boolean keepMessages;
  private boolean ended;
  // the frame being read
  private byte frameOpcode;
  private boolean frameFin;
  private int frameMask;
  private long frameOffset;
  private long frameLength;
  private byte[] control;
  // the message being read: its payload, unmasked, in its own array
  private int messageOpcode = NO_MESSAGE;
  private byte[] message = NO_BYTES;
  private long messageSize;
  /**
   * The frame a binary message of one frame that reads cut is unmasked into as its pieces arrive
   * ({@link WsFrames#frameBuffer}), or null.
   */
  private ByteBuf building;
  /** The bytes of {@code message} or {@code building} counted in the budget. */
  private volatile long reserved;
  /** Where a text message's bytes are unmasked to be checked when messages are not kept. */
  private byte[] scratch;

  /**
   * @param keepMessages false to hand on only the size of each message (a participant whose
   *     messages are not relayed); text is checked all the same
   * @param maxMessageBytes the largest message accepted
   */
  public InboundProtocol(Listener listener, boolean keepMessages, long maxMessageBytes, MemoryBudget budget) {
    this.listener = listener;
    this.keepMessages = keepMessages;
    this.maxMessageBytes = maxMessageBytes;
    this.budget = budget;
  }

  /** Reads the next bytes the client sent, the readable bytes of {@code bytes}; none once reading has ended. */
  public void read(ByteBuf bytes) {
    if (!ended) {
      reader.read(bytes, this);
    }
  }

  /**
   * Stops keeping messages: the rest of the connection's messages are read for the rules and
   * for the client's close only (the server is closing the connection).
   */
  public void discardMessages() {
    keepMessages = false;
    release();
  }

  /** The bytes of a message being received that count in the memory budget (any thread). */
  public long reservedBytes() {
    return reserved;
  }

  /** Lets go of the message being received (the connection ended, or the message did). */
  public void release() {
    message = NO_BYTES;
    if (building != null) {
      building.release();
      building = null;
    }
    if (reserved > 0) {
      budget.release(reserved);
      reserved = 0;
    }
  }

  @Override
  public boolean onHeader(byte opcode, boolean fin, int rsv, boolean masked, int mask, long length) {
    if (!masked) {
      return violation(CloseCodes.PROTOCOL_ERROR, "client frames must be masked");
    }
    if (rsv != 0) {
      return violation(CloseCodes.PROTOCOL_ERROR, "reserved bits set without an extension");
    }
    if (length < 0) {
      return violation(CloseCodes.PROTOCOL_ERROR, "frame length with its most significant bit set");
    }
    frameOpcode = opcode;
    frameFin = fin;
    frameMask = mask;
    frameOffset = 0;
    frameLength = length;
    if (opcode >= WsFrames.CLOSE) {
      if (opcode > WsFrames.PONG) {
        return violation(CloseCodes.PROTOCOL_ERROR, "reserved control opcode " + opcode);
      }
      if (!fin) {
        return violation(CloseCodes.PROTOCOL_ERROR, "fragmented control frame");
      }
      if (length > 125) {
        return violation(CloseCodes.PROTOCOL_ERROR, "control frame longer than 125 bytes");
      }
      control = new byte[(int) length];
      return true;
    }
    if (opcode == WsFrames.CONTINUATION) {
      if (messageOpcode == NO_MESSAGE) {
        return violation(CloseCodes.PROTOCOL_ERROR, "continuation frame outside a message");
      }
    } else if (opcode == WsFrames.TEXT || opcode == WsFrames.BINARY) {
      if (messageOpcode != NO_MESSAGE) {
        return violation(CloseCodes.PROTOCOL_ERROR, "new message inside a fragmented one");
      }
      messageOpcode = opcode;
      utf8.reset();
    } else {
      return violation(CloseCodes.PROTOCOL_ERROR, "reserved opcode " + opcode);
    }
    if (length > maxMessageBytes - messageSize) { // not messageSize + length, which a 64-bit length overflows
      return violation(CloseCodes.TOO_BIG, "message larger than " + maxMessageBytes + " bytes");
    }
    return true;
  }

  @Override
  public boolean onPayload(ByteBuf bytes, int start, int length, boolean last) {
    if (frameOpcode >= WsFrames.CLOSE) {
      bytes.getBytes(start, control, (int) frameOffset, length);
      Unmasker.unmask(control, (int) frameOffset, length, frameMask, frameOffset);
      frameOffset += length;
      if (last) {
        onControl();
      }
    } else {
      onData(bytes, start, length, last);
    }
    return !ended;
  }

  private void onData(ByteBuf bytes, int start, int length, boolean last) {
    boolean text = messageOpcode == WsFrames.TEXT;
    if (keepMessages && !text && messageSize == 0 && frameOffset == 0 && frameFin) {
      if (last) {
        // a whole binary message in this read (the usual case)
        handOn(WsFrames.unmasked(bytes.alloc(), (byte) messageOpcode, bytes, start, length, frameMask));
        return;
      }
      if (frameLength - length <= AHEAD && !startFrame(bytes.alloc())) {
        return;
      }
    }
    if (building != null) {
      Unmasker.copy(bytes, start, length, frameMask, frameOffset, building);
      messageSize += length;
      frameOffset += length;
      if (last) {
        Frame frame = WsFrames.built((byte) messageOpcode, building, (int) messageSize);
        building = null;
        release();
        handOn(frame);
      }
      return;
    }
    boolean valid;
    if (keepMessages) {
      int at = (int) messageSize;
      if (!copyOut(bytes, start, length, last)) {
        violation(CloseCodes.TRY_AGAIN_LATER, "no memory for this message now");
        return;
      }
      Unmasker.unmask(message, at, length, frameMask, frameOffset);
      valid = !text || utf8.feed(message, at, length);
    } else {
      valid = !text || checkDiscarded(bytes, start, length);
    }
    if (!valid) {
      violation(CloseCodes.INVALID_PAYLOAD, "text message that is not UTF-8");
      return;
    }
    messageSize += length;
    frameOffset += length;
    if (last && frameFin) {
      if (text && !utf8.isComplete()) {
        violation(CloseCodes.INVALID_PAYLOAD, "text message ends inside a UTF-8 character");
        return;
      }
      byte opcode = (byte) messageOpcode;
      byte[] bytesOut = keepMessages ? message : null;
      int size = (int) messageSize;
      messageOpcode = NO_MESSAGE;
      release();
      messageSize = 0;
      listener.onMessage(opcode, bytesOut, 0, size);
    }
  }

  /**
   * Makes the frame a binary message of one frame that reads cut is unmasked into, its payload
   * counted in the budget whole.
   *
   * @return false when the budget has no room for it: the connection fails
   */
  private boolean startFrame(ByteBufAllocator alloc) {
    int size = (int) frameLength;
    if (!budget.tryCharge(size)) {
      return violation(CloseCodes.TRY_AGAIN_LATER, "no memory for this message now");
    }
    reserved = size;
    building = WsFrames.frameBuffer(alloc, (byte) messageOpcode, size);
    return true;
  }

  /** Hands on a whole binary message in its frame. */
  private void handOn(Frame frame) {
    messageOpcode = NO_MESSAGE;
    messageSize = 0;
    listener.onFrame(frame);
  }

  /**
   * Copies a piece of the payload, still masked, into the message's array after what it holds.
   *
   * @return false when the node's memory budget has no room for the message to grow
   */
  private boolean copyOut(ByteBuf bytes, int start, int length, boolean last) {
    int size = (int) messageSize;
    if (size == 0 && frameOffset == 0 && last && frameFin) {
      // the whole message in this read (the usual case): an array of its size
      message = new byte[length];
    } else if (!reserve(size + (int) Math.min(frameLength - frameOffset, Math.max(length, AHEAD)))) {
      // room for what arrived and the rest of its frame, asking for at most 64 KiB more than arrived
      return false;
    }
    bytes.getBytes(start, message, size, length);
    return true;
  }

  /**
   * Makes the message's array hold at least {@code size} payload bytes, at least doubling it when
   * it grows (a header alone never makes the node allocate: only bytes that arrived do).
   *
   * @return false when the memory budget has no room for the larger array
   */
  private boolean reserve(int size) {
    if (size > message.length) {
      int capacity = (int) Math.min(Math.max(size, 2 * message.length), maxMessageBytes);
      if (!budget.tryCharge(capacity - reserved)) {
        return false;
      }
      message = Arrays.copyOf(message, capacity);
      reserved = capacity;
    }
    return true;
  }

  /** Checks a piece of a text message that is not kept, unmasked in a scratch array. */
  private boolean checkDiscarded(ByteBuf bytes, int start, int length) {
    int done = 0;
    while (done < length) {
      if (scratch == null) {
        scratch = new byte[8 * 1024];
      }
      int n = Math.min(scratch.length, length - done);
      bytes.getBytes(start + done, scratch, 0, n);
      Unmasker.unmask(scratch, 0, n, frameMask, frameOffset + done);
      if (!utf8.feed(scratch, 0, n)) {
        return false;
      }
      done += n;
    }
    return true;
  }

  private void onControl() {
    byte[] payload = control;
    control = null;
    switch (frameOpcode) {
      case WsFrames.PING -> listener.onPing(payload);
      case WsFrames.CLOSE -> {
        CloseFrame close = CloseFrame.parse(payload);
        if (close == null) {
          violation(CloseCodes.PROTOCOL_ERROR, "invalid close frame");
        } else {
          ended = true;
          release();
          listener.onClose(close);
        }
      }
      default -> { } // an unsolicited pong needs no answer (section 5.5.3)
    }
  }

  private boolean violation(int closeCode, String reason) {
    ended = true;
    release();
    listener.onViolation(closeCode, reason);
    return false;
  }
}
