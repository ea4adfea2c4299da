package io.relay.ws;

import io.netty.channel.Channel;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.ssl.SslHandler;

/**
 * Ends the server's side of a connection after its last bytes, without ending the client's: a
 * TLS connection sends its {@code close_notify} first, then the socket's output is shut down (a
 * FIN). The client's bytes are still read (and ignored), so that bytes it sent meanwhile never
 * turn the close into a reset, which could destroy the server's last bytes on their way; the
 * caller closes the connection when the client ends its side or after a deadline.
 */
public final class OutputEnd {
  private OutputEnd() {}

  /** Ends {@code channel}'s output once what was written before is flushed. */
  public static void after(Channel channel) {
    SslHandler tls = channel.pipeline().get(SslHandler.class);
    if (tls == null) {
      shutdown(channel);
    } else {
      tls.closeOutbound().addListener(sent -> shutdown(channel));
    }
  }

  private static void shutdown(Channel channel) {
    if (channel instanceof DuplexChannel duplex && channel.isActive()) {
      duplex.shutdownOutput();
    } else {
      channel.close();
    }
  }
}
