package io.relay.http.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.security.NoSuchAlgorithmException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.TLSProtocol;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.InHandler;
import org.apache.pekko.stream.stage.OutHandler;
import org.apache.pekko.util.ByteString;

/**
 * One accepted socket as a stream stage: bytes pushed in are written to the socket, bytes read
 * from it are pushed out, in the TLS protocol's plain-text envelopes that Pekko HTTP's server
 * layer speaks (what Pekko's {@code TLSPlacebo} would add as two more stages per connection). The
 * stage reads and writes the socket itself, on its own stream's thread; the {@link SocketServer}'s selector thread only tells it when a socket that had nothing
 * to read became readable, or one that was full became writable.
 *
 * <p>Reads happen only on demand: a read that finds nothing asks the selector to watch the socket,
 * and while the stream does not pull, nothing is read and TCP's own window pushes back on the
 * peer. Writes go straight to the socket; while the socket is full, further bytes are gathered
 * up to {@code writeBufferBytes} before the stage stops pulling. When the peer closes its side,
 * the outlet completes and what is being written still goes out (as with Pekko's TCP stage
 * without half-close); when the stream finishes writing or stops reading, the socket is closed
 * once what is gathered has been written. A failure from upstream resets the connection.
 */
final class SocketStage extends GraphStage<FlowShape<TLSProtocol.SslTlsOutbound, TLSProtocol.SslTlsInbound>> {
  private static final int BUFFER_BYTES = 128 * 1024;
  /** The session of plain-text bytes (protocol SSL_NULL_WITH_NULL_NULL), as TLSPlacebo's. */
  private static final SSLSession NO_TLS = plainSession();
  /** Each stream thread's read buffer: a read copies exactly the bytes it got out of it. */
  private static final ThreadLocal<ByteBuffer> READ_BUFFER =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BUFFER_BYTES));
  /**
   * Each stream thread's write buffer: what is to be written is copied into it and written in
   * one call (the copy the JDK would make into its own temporary buffer, one per part).
   */
  private static final ThreadLocal<ByteBuffer> WRITE_BUFFER =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BUFFER_BYTES));

  private final Inlet<TLSProtocol.SslTlsOutbound> in = Inlet.create("Socket.toNetwork");
  private final Outlet<TLSProtocol.SslTlsInbound> out = Outlet.create("Socket.fromNetwork");
  private final FlowShape<TLSProtocol.SslTlsOutbound, TLSProtocol.SslTlsInbound> shape = FlowShape.of(in, out);
  private final SocketServer.Endpoint endpoint;
  private final int writeBufferBytes;

  SocketStage(SocketServer.Endpoint endpoint, int writeBufferBytes) {
    this.endpoint = endpoint;
    this.writeBufferBytes = writeBufferBytes;
  }

  @Override
  public FlowShape<TLSProtocol.SslTlsOutbound, TLSProtocol.SslTlsInbound> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes attributes) {
    return new Logic();
  }

  private final class Logic extends GraphStageLogic implements InHandler, OutHandler {
    private final SocketChannel channel = endpoint.channel();
    private ByteString toWrite = ByteString.emptyByteString();
    private boolean waitingWritable;
    private boolean closeWhenWritten;

    Logic() {
      super(shape);
      setHandlers(in, out, this);
    }

    @Override
    public void preStart() {
      AsyncCallback<Integer> ready = createAsyncCallback(this::onReady);
      endpoint.attach(ops -> ready.invoke(ops));
      pull(in);
    }

    @Override
    public void postStop() {
      endpoint.close();
    }

    // ---- socket to stream

    @Override
    public void onPull() {
      read();
    }

    @Override
    public void onDownstreamFinish(Throwable cause) {
      closeWhenWritten();
    }

    private void read() {
      ByteBuffer buffer = READ_BUFFER.get();
      buffer.clear();
      int n;
      try {
        n = channel.read(buffer);
      } catch (IOException e) {
        failStage(e);
        return;
      }
      if (n > 0) {
        buffer.flip();
        byte[] bytes = new byte[n];
        buffer.get(bytes);
        endpoint.active();
        push(out, new TLSProtocol.SessionBytes(NO_TLS, ByteString.fromArrayUnsafe(bytes)));
      } else if (n == 0) {
        endpoint.watch(SelectionKey.OP_READ);
      } else {
        complete(out);
      }
    }

    // ---- stream to socket

    @Override
    public void onPush() {
      if (grab(in) instanceof TLSProtocol.SendBytes send) {
        toWrite = toWrite.concat(send.bytes());
      }
      if (!waitingWritable) {
        write();
      }
      pullIfRoom();
    }

    @Override
    public void onUpstreamFinish() {
      closeWhenWritten();
    }

    @Override
    public void onUpstreamFailure(Throwable cause) {
      endpoint.reset();
      failStage(cause);
    }

    private void write() {
      try {
        while (!toWrite.isEmpty()) {
          ByteBuffer buffer = WRITE_BUFFER.get();
          buffer.clear();
          toWrite.copyToBuffer(buffer);
          buffer.flip();
          int n = channel.write(buffer);
          toWrite = toWrite.drop(n);
          if (n > 0) {
            endpoint.active();
          }
          if (buffer.hasRemaining()) {
            // the socket is full: go on when it is writable again
            waitingWritable = true;
            endpoint.watch(SelectionKey.OP_WRITE);
            return;
          }
        }
      } catch (IOException e) {
        failStage(e);
        return;
      }
      if (closeWhenWritten) {
        completeStage();
      }
    }

    private void pullIfRoom() {
      if (!isClosed(in) && !hasBeenPulled(in) && toWrite.size() < writeBufferBytes) {
        pull(in);
      }
    }

    private void closeWhenWritten() {
      closeWhenWritten = true;
      if (toWrite.isEmpty()) {
        completeStage();
      }
    }

    // ---- readiness from the selector

    private void onReady(int ops) {
      if ((ops & SocketServer.Endpoint.CLOSED) != 0) {
        failStage(new IOException("the server closed the connection"));
        return;
      }
      if ((ops & SelectionKey.OP_WRITE) != 0 && waitingWritable) {
        waitingWritable = false;
        write();
        pullIfRoom();
      }
      if ((ops & SelectionKey.OP_READ) != 0 && isAvailable(out)) {
        read();
      }
    }
  }

  private static SSLSession plainSession() {
    try {
      return SSLContext.getDefault().createSSLEngine().getSession();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("no default TLS context to describe plain-text sessions", e);
    }
  }
}
