package io.relay.http.socket;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.util.Arrays;
import java.util.Map;
import java.util.function.IntConsumer;
import io.relay.http.log.WarningLimiter;
import org.apache.pekko.util.ByteString;

/**
 * A connection of a port that serves only upgrades, until its request is answered: reads the
 * request head on the selector thread (no stream runs yet), asks the port's {@link Upgrades} for
 * the answer, and then either hands the socket, with the response to write first and any bytes
 * that followed the head, to the answer's protocol (one stream for the connection's life), or
 * writes the refusal and closes.
 *
 * <p>A head that cannot be parsed is refused with its {@link RequestHead.Malformed} status and
 * counted ({@code relay_malformed_request_heads_total}); the log says only the status (a target
 * may hold a code), once of a kind per interval. The header and idle timeouts of the
 * {@link SocketServer} apply as on HTTP connections.
 */
final class HandshakeConnection implements IntConsumer {
  /** The most a refused peer may send after its request before the connection is closed at once. */
  private static final int MAX_DISCARDED = 64 * 1024;

  private final SocketEndpoint endpoint;
  private final Upgrades upgrades;
  private final WarningLimiter warnings;
  private final SocketCounters counters;
  private final RequestHead.Scanner scanner = new RequestHead.Scanner();
  private byte[] head = new byte[1024];
  private int length;
  /** The refusal being written; set once, then written on the selector thread while the socket is full. */
  private volatile ByteBuffer refusal;
  /** What the peer sent after its refused request, read and dropped while the connection lingers. */
  private long discarded;

  HandshakeConnection(SocketEndpoint endpoint, Upgrades upgrades, WarningLimiter warnings, SocketCounters counters) {
    this.endpoint = endpoint;
    this.upgrades = upgrades;
    this.warnings = warnings;
    this.counters = counters;
  }

  /** Starts reading the request head. */
  void start() {
    endpoint.attach(this);
    endpoint.watch(SelectionKey.OP_READ);
  }

  /** Readiness from the selector thread. */
  @Override
  public void accept(int ops) {
    if ((ops & SocketEndpoint.CLOSED) != 0) {
      return;
    }
    if (refusal == null) {
      read();
    } else if (refusal.hasRemaining()) {
      writeRefusal();
    } else {
      discard();
    }
  }

  private void read() {
    try {
      while (true) {
        if (length == head.length) {
          head = Arrays.copyOf(head, Math.min(2 * head.length, RequestHead.MAX_HEAD_BYTES));
        }
        int n = endpoint.channel().read(ByteBuffer.wrap(head, length, head.length - length));
        if (n < 0) {
          endpoint.close();
          return;
        }
        if (n == 0) {
          endpoint.watch(SelectionKey.OP_READ);
          return;
        }
        length += n;
        endpoint.active();
        int end = scanner.end(head, length);
        if (end >= 0) {
          endpoint.inHead(false);
          received(RequestHead.parse(head, end), end);
          return;
        }
      }
    } catch (RequestHead.Malformed e) {
      endpoint.inHead(false);
      counters.malformedHeads.increment();
      warnings.warn("refused a request that could not be parsed: {}", e.status());
      refuse(PlainResponse.render(e.status(), e.getMessage(), Map.of()));
    } catch (IOException e) {
      endpoint.reset();
    }
  }

  private void received(RequestHead request, int end) throws IOException {
    ByteString unread = end < length ? ByteString.fromArray(head, end, length - end) : ByteString.emptyByteString();
    head = null;
    InetSocketAddress peer = (InetSocketAddress) endpoint.channel().getRemoteAddress();
    upgrades
        .answer(request, peer)
        .whenComplete(
            (answer, failure) -> {
              if (failure != null) {
                warnings.error("answering an upgrade request failed", failure);
                refuse(PlainResponse.render(500, "internal error", Map.of()));
              } else if (answer.protocol() == null) {
                refuse(answer.response());
              } else {
                endpoint.serve(answer.protocol(), ByteString.fromArrayUnsafe(answer.response()), unread);
              }
            });
  }

  /**
   * Writes {@code response}, then shuts the socket's output down and reads until the peer closes
   * (at most {@link #MAX_DISCARDED} bytes, for at most {@link SocketServer#LINGER}): closing with
   * the peer's bytes unread would reset the connection, which can destroy the response before the
   * client has read it.
   */
  private void refuse(byte[] response) {
    refusal = ByteBuffer.wrap(response);
    writeRefusal();
  }

  private void writeRefusal() {
    try {
      endpoint.channel().write(refusal);
      if (refusal.hasRemaining()) {
        endpoint.watch(SelectionKey.OP_WRITE);
        return;
      }
      endpoint.channel().shutdownOutput();
    } catch (IOException e) {
      endpoint.reset();
      return;
    }
    endpoint.linger();
    discard();
  }

  private void discard() {
    ByteBuffer buffer = ByteBuffer.allocate(4096);
    try {
      while (true) {
        buffer.clear();
        int n = endpoint.channel().read(buffer);
        if (n < 0 || (discarded += n) > MAX_DISCARDED) {
          endpoint.close();
          return;
        }
        if (n == 0) {
          endpoint.watch(SelectionKey.OP_READ);
          return;
        }
      }
    } catch (IOException e) {
      endpoint.close();
    }
  }
}
