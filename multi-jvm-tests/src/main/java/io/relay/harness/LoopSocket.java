package io.relay.harness;

import io.relay.bench.SelectorLoop;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * One non-blocking TCP connection of the harness's client on a {@link SelectorLoop}: what arrives
 * is gathered in one growing buffer that the client reads from its start ({@link #in}, {@link
 * #consumed}); what the client writes waits in a queue until the socket takes it. Every method
 * runs on the loop's thread.
 */
final class LoopSocket implements SelectorLoop.Ready {
  /** What the socket tells its client. */
  interface Client {
    /** Bytes arrived: they are in {@link #in}, after the ones not consumed yet. */
    void onBytes();

    /** The peer ended its side of the connection. */
    void onEnded();

    /** The connection failed (refused, reset). */
    void onLost(String why);
  }

  private final SelectorLoop loop;
  private final Client client;
  private final SocketChannel channel;
  private final SelectionKey key;
  private ByteBuffer in = ByteBuffer.allocate(4096);
  private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
  private boolean closed;

  /** Connects to {@code to}, and writes {@code first} once connected. */
  LoopSocket(SelectorLoop loop, InetSocketAddress to, ByteBuffer first, Client client) throws IOException {
    this.loop = loop;
    this.client = client;
    channel = SocketChannel.open();
    try {
      channel.configureBlocking(false);
      channel.socket().setTcpNoDelay(true);
      out.add(first);
      boolean connected = channel.connect(to);
      key = channel.register(loop.selector(), connected ? SelectionKey.OP_READ : SelectionKey.OP_CONNECT, this);
      if (connected) {
        flush();
      }
    } catch (IOException | RuntimeException e) {
      channel.close();
      throw e;
    }
  }

  /** What has arrived and was not consumed yet, from index 0 to the position. */
  ByteBuffer in() {
    return in;
  }

  /** The client is done with the first {@code count} bytes of {@link #in}. */
  void consumed(int count) {
    in.flip();
    in.position(count);
    in.compact();
  }

  @Override
  public void onReady(SelectionKey ready) {
    try {
      if (ready.isConnectable()) {
        channel.finishConnect();
        key.interestOps(SelectionKey.OP_READ);
        flush();
        return;
      }
      if (ready.isWritable()) {
        flush();
      }
      if (ready.isReadable()) {
        read();
      }
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        client.onLost(String.valueOf(e.getMessage()));
      }
    }
  }

  /** Reads until the socket has no more, or the client closed it meanwhile. */
  private void read() throws IOException {
    ByteBuffer buffer = loop.readBuffer();
    while (!closed) {
      buffer.clear();
      int n = channel.read(buffer);
      if (n > 0) {
        buffer.flip();
        append(buffer);
        client.onBytes();
      }
      if (n < 0) {
        client.onEnded();
        return;
      }
      if (n < buffer.capacity()) {
        return;
      }
    }
  }

  private void append(ByteBuffer bytes) {
    if (in.remaining() < bytes.remaining()) {
      ByteBuffer larger = ByteBuffer.allocate(Math.max(in.capacity() * 2, in.position() + bytes.remaining()));
      in.flip();
      larger.put(in);
      in = larger;
    }
    in.put(bytes);
  }

  /** Writes {@code bytes} after what waits to be written; a failure is the client's {@link Client#onLost}. */
  void write(ByteBuffer bytes) {
    out.add(bytes);
    try {
      flush();
    } catch (IOException e) {
      client.onLost(String.valueOf(e.getMessage()));
    }
  }

  private void flush() throws IOException {
    if (closed || !channel.isConnected()) {
      return;
    }
    while (!out.isEmpty()) {
      ByteBuffer next = out.peekFirst();
      channel.write(next);
      if (next.hasRemaining()) {
        break;
      }
      out.pollFirst();
    }
    if (key.isValid()) {
      key.interestOps(out.isEmpty() ? SelectionKey.OP_READ : SelectionKey.OP_READ | SelectionKey.OP_WRITE);
    }
  }

  /** Gives the connection up: what was not written yet is dropped. */
  void close() {
    closed = true;
    out.clear();
    key.cancel();
    try {
      channel.close();
    } catch (IOException ignored) {
      // the socket is being given up
    }
  }
}
