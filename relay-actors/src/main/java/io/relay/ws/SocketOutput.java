package io.relay.ws;

import java.io.IOException;
import org.apache.pekko.util.ByteString;

/**
 * A connection's socket as the threads of other connections may write it: the writers of a topic
 * write a frame to an idle reader's socket themselves ({@link OutboundQueue}), instead of handing
 * it to the reader's own stream. Only plain sockets are written this way; a TLS connection's
 * bytes are encrypted by its own stream.
 */
public interface SocketOutput {
  /**
   * Writes as much of {@code bytes} as the socket takes now, without blocking.
   *
   * @return how many bytes the socket took
   */
  int write(ByteString bytes) throws IOException;

  /**
   * A protocol's flow that is given its socket before it runs: the protocol sizes its reads, and
   * on a plain socket writers write it directly.
   */
  interface User {
    /** @param output the socket as other threads write it, or null on TLS */
    void useSocket(SocketOutput output, ReadSizing reads);
  }
}
