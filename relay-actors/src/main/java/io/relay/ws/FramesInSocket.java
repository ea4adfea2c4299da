package io.relay.ws;

import io.relay.ws.WsFrames.Frame;
import java.util.ArrayDeque;

/**
 * The frames a connection has handed to its socket and the socket has not written yet, oldest
 * first: at most one on the plain relay port, more while a TLS socket gathers them. Each is held,
 * and counted as the connection's, until the socket says it has written it ({@link
 * SocketOutput.User#written}); a frame still here when the connection ends is let go of without
 * its array being reused ({@link Frame#abandon}), as the socket may still be writing it.
 *
 * <p>Used on the connection's stream's thread; {@link #bytes} is read from others (the memory
 * budget's shedding).
 */
public final class FramesInSocket {
  /** Starts at the smallest: an idle connection holds nothing here. */
  private final ArrayDeque<Frame> frames = new ArrayDeque<>(1);
  private volatile long bytes;

  /** The connection handed {@code frame} to its socket. */
  public void handed(Frame frame) {
    frames.addLast(frame);
    bytes += frame.payloadLength();
  }

  /** The socket wrote the oldest frame: it is let go of. Once {@link #abandonAll} ran, there is none. */
  public void written() {
    Frame frame = frames.pollFirst();
    if (frame != null) {
      bytes -= frame.payloadLength();
      frame.release();
    }
  }

  /** The connection ended: every frame still here is let go of, its array left to the garbage collector. */
  public void abandonAll() {
    for (Frame frame : frames) {
      frame.abandon();
    }
    frames.clear();
    bytes = 0;
  }

  /** Whether the socket has written everything it was handed. */
  public boolean isEmpty() {
    return frames.isEmpty();
  }

  /** Payload bytes of the frames here. */
  public long bytes() {
    return bytes;
  }
}
