package io.relay.http.socket;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.function.IntConsumer;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.util.ByteString;

/**
 * One accepted socket of a {@link SocketServer}, as the stage that serves it and the server's
 * selector thread share it: readiness handed to the stage, interest and activity, closing, and
 * serving it with a protocol's flow once its upgrade request is answered.
 */
final class SocketEndpoint {
  /** Readiness value telling the stage that the server closed the socket under it. */
  static final int CLOSED = 1 << 30;

  private final SocketServer server;
  private final SocketChannel channel;
  private final SelectionKey key;
  private volatile IntConsumer onReady;
  private volatile long lastActive = System.nanoTime();
  /**
   * When the request head being received started ({@link System#nanoTime}), or 0 for none. A new
   * connection waits for its first head from the start.
   */
  private volatile long headStarted = System.nanoTime();
  /** When the server sent its last bytes and began waiting for the peer to close, or 0. */
  private volatile long lingerStarted;

  SocketEndpoint(SocketServer server, SocketChannel channel, SelectionKey key) {
    this.server = server;
    this.channel = channel;
    this.key = key;
    key.attach(this);
  }

  SocketChannel channel() {
    return channel;
  }

  /** Where readiness goes: the stage's async callback, or null while no stage serves it. */
  void attach(IntConsumer onReady) {
    this.onReady = onReady;
  }

  /**
   * Serves the socket with {@code flow} over a new stage that first writes {@code unwritten} and
   * hands {@code unread} to the flow before anything it reads.
   */
  void serve(Graph<FlowShape<ByteString, ByteString>, ?> flow, ByteString unwritten, ByteString unread) {
    server.switchProtocol(this, flow, unwritten, unread);
  }

  /** Reports readiness for {@code op} (OP_READ or OP_WRITE) once. */
  void watch(int op) {
    try {
      key.interestOpsOr(op);
      server.wakeup();
    } catch (CancelledKeyException e) {
      // closed meanwhile: the stage is stopping
    }
  }

  /** The stage read or wrote something. */
  void active() {
    lastActive = System.nanoTime();
  }

  /** Whether a request head has started and not ended yet; its start is kept while it goes on. */
  void inHead(boolean inHead) {
    if (!inHead) {
      headStarted = 0;
    } else if (headStarted == 0) {
      headStarted = System.nanoTime();
    }
  }

  /** When the request head being received started ({@link System#nanoTime}), or 0 for none. */
  long headStarted() {
    return headStarted;
  }

  /** The server has said its last and waits for the peer to close ({@link ConnectionSweep#LINGER}). */
  void linger() {
    lingerStarted = System.nanoTime();
  }

  /** When the server began waiting for the peer to close ({@link System#nanoTime}), or 0. */
  long lingerStarted() {
    return lingerStarted;
  }

  /** When the stage last read or wrote something ({@link System#nanoTime}). */
  long lastActive() {
    return lastActive;
  }

  void ready(int ops) {
    IntConsumer target = onReady;
    if (target != null) {
      target.accept(ops);
    }
  }

  /**
   * Closes the socket (the stage stopped). A channel registered with a selector is only really
   * closed once the selector deregisters it, so the selector is woken to do that now.
   */
  void close() {
    closeQuietly(channel);
    server.wakeup();
    server.closed(this);
  }

  /** Closes the socket with a reset (a failure, or terminate's deadline) and tells the stage. */
  void reset() {
    try {
      channel.setOption(StandardSocketOptions.SO_LINGER, 0);
    } catch (IOException | RuntimeException ignored) {
      // already closed
    }
    close();
    ready(CLOSED);
  }

  static void closeQuietly(SocketChannel channel) {
    try {
      channel.close();
    } catch (IOException ignored) {
      // closing a socket that failed: nothing left to do
    }
  }
}
