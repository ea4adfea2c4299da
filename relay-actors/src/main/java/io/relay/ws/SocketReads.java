package io.relay.ws;

import org.apache.pekko.util.ByteString;

/**
 * How a connection's protocol and its socket share reads.
 *
 * <p>The protocol sizes the socket's next read after each one ({@link
 * InboundProtocol#nextReadBytes}). A read that ends where a frame ends lets the next large message
 * arrive whole in a read of its own and be unmasked and relayed from there; a read that cuts a
 * message costs a copy of it into an array of its own.
 *
 * <p>A large read is copied into an array from {@link ReadArrays}, as long as the read or longer,
 * and handed on as a view of its first bytes; the protocol asks for the array behind it ({@link #lentArray})
 * to read it in place and, when a message stays in it, to give the array back once the message has
 * been written to every reader.
 */
public interface SocketReads {
  /** The socket's next read takes at most {@code bytes} (at least 1; the socket's own cap applies). */
  void nextReadAtMost(int bytes);

  /**
   * The array of {@link ReadArrays} that {@code read}, the socket's last read, is the first bytes
   * of, handed over to the caller: asked once per read; null if {@code read} is not in such an
   * array, or not the last read.
   */
  byte[] lentArray(ByteString read);
}
