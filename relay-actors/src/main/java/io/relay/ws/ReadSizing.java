package io.relay.ws;

/**
 * How much a connection's next socket read takes at most, set by its protocol after each read
 * ({@link InboundProtocol#nextReadBytes}). A read that ends where a frame ends lets the next large
 * message arrive whole in a read of its own and be unmasked and relayed from there; a read that
 * cuts a message costs a copy of it into an array of its own.
 */
public interface ReadSizing {
  /** The socket's next read takes at most {@code bytes} (at least 1; the socket's own cap applies). */
  void nextReadAtMost(int bytes);
}
