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
   * A protocol's flow that is given its socket before it runs: the protocol sizes its reads, on a
   * plain socket writers write it directly, and the socket says when it is done with what the
   * protocol gave it.
   */
  interface User {
    /**
     * @param output the socket as other threads write it, or null on TLS. A socket given here
     *     asks for its protocol's next bytes only once it has written all it was given before,
     *     so that no other thread writes it meanwhile.
     * @param reads how the socket's reads are sized, and the arrays large ones are lent in
     */
    void useSocket(SocketOutput output, SocketReads reads);

    /**
     * The socket is done with the oldest of the elements the protocol's stream gave it that it
     * has not reported yet: all of its bytes are written (on TLS, taken by the TLS layer), and it
     * will not read them again. Called on the protocol's stream's thread, once per element, in
     * order; an element the socket had not written when the connection ended is never reported.
     */
    void written();
  }
}
