package io.relay.http.socket;

import io.relay.ws.SocketOutput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.security.NoSuchAlgorithmException;
import java.util.function.Function;
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
 * from it are pushed out. Under Pekko HTTP's server layer they travel in the TLS protocol's
 * plain-text envelopes that the layer speaks (what Pekko's {@code TLSPlacebo} would add as two
 * more stages per connection); under the protocol an upgrade switched the connection to, as bytes. The stage
 * writes the socket itself, on its own stream's thread, and reads it there too, except on a plain
 * socket under a switched protocol while it waits for bytes: there the {@link SocketServer}'s
 * selector thread reads them for it as soon as they arrive ({@link SelectorReads}).
 * Otherwise the selector thread only tells the stage when a socket that had nothing to read became
 * readable, or one that was full became writable.
 *
 * <p>Reads happen only on demand: a read that finds nothing asks the selector to watch the socket,
 * and while the stream does not pull, nothing is read (not by the selector either) and TCP's own
 * window pushes back on the peer. Writes go straight to the socket; while the socket is full,
 * further bytes are gathered up to {@code writeBufferBytes} before the stage stops pulling. Under a
 * switched protocol that asks ({@link SocketOutput.User#written}), the stage tells it each time it
 * has written the whole of an element it was pushed, so the protocol knows when the socket is done
 * with its bytes. When
 * the peer closes its side, the outlet completes and what is being written still goes out (as with
 * Pekko's TCP stage without half-close). When the stream stops reading, the socket is closed once
 * what is gathered has been written. When the stream finishes writing, under HTTP the socket is
 * closed the same way; under a switched protocol only the socket's output is shut down once
 * everything is written (a FIN), and the peer's bytes are read on until the stream stops reading: a
 * WebSocket server ends the TCP connection first, and a peer's late bytes must not turn its close
 * into a reset that could destroy the close frame in flight. A failure from upstream resets the
 * connection.
 *
 * <p>Under HTTP the stage follows request heads ({@link RequestHeads}) so that the server's header
 * timeout knows when one is being received.
 *
 * <p>Why one class of over 300 lines: reading, writing, the two ways of finishing and the
 * selector's wake-ups all act on one socket and one set of stage handlers; the head tracking
 * ({@link RequestHeads}), what is left to write ({@link PendingWrites}) and the selector's reads
 * ({@link SelectorReads}) are their own classes.
 */
final class SocketStage<I, O> extends GraphStage<FlowShape<I, O>> {
  private static final int BUFFER_BYTES = 128 * 1024;
  /** The session of plain-text bytes (protocol SSL_NULL_WITH_NULL_NULL), as TLSPlacebo's. */
  private static final SSLSession NO_TLS = plainSession();
  /**
   * Each stream thread's write buffer: what is to be written is copied into it and written in
   * one call (the copy the JDK would make into its own temporary buffer, one per part).
   */
  private static final ThreadLocal<ByteBuffer> WRITE_BUFFER =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BUFFER_BYTES));

  private final Inlet<I> in = Inlet.create("Socket.toNetwork");
  private final Outlet<O> out = Outlet.create("Socket.fromNetwork");
  private final FlowShape<I, O> shape = FlowShape.of(in, out);
  private final SocketEndpoint endpoint;
  private final int writeBufferBytes;
  /** The bytes to write in what the stage is pushed, or null for none. */
  private final Function<I, ByteString> bytesOf;
  /** What the stage pushes for bytes read. */
  private final Function<ByteString, O> wrap;
  /** Whether the stage serves HTTP. */
  private final boolean http;
  /** Bytes to write first: the response that switched the connection to its protocol. */
  private final ByteString unwritten;
  /** Bytes to push first: what the client sent that the node read before the stage started. */
  private final ByteString unread;
  /**
   * Whether the stage takes the next bytes only once everything before them is written: the
   * socket's flow lets other threads write it while nothing is pending ({@link SocketOutput}).
   */
  private final boolean pullWhenWritten;
  /** Whether the selector reads the socket while the stage waits for bytes. */
  private final boolean selectorReads;
  /** Told each time the stage is done with an element it was pushed, or null. */
  private final Runnable onWritten;

  private SocketStage(
      SocketEndpoint endpoint,
      int writeBufferBytes,
      Function<I, ByteString> bytesOf,
      Function<ByteString, O> wrap,
      boolean http,
      ByteString unwritten,
      ByteString unread,
      boolean pullWhenWritten,
      Runnable onWritten) {
    this.endpoint = endpoint;
    this.writeBufferBytes = writeBufferBytes;
    this.bytesOf = bytesOf;
    this.wrap = wrap;
    this.http = http;
    this.unwritten = unwritten;
    this.unread = unread;
    this.pullWhenWritten = pullWhenWritten;
    this.selectorReads = !http && !endpoint.isTls();
    this.onWritten = onWritten;
  }

  /** The stage under Pekko HTTP's server layer, pushing {@code unread} before it reads the socket. */
  static SocketStage<TLSProtocol.SslTlsOutbound, TLSProtocol.SslTlsInbound> http(
      SocketEndpoint endpoint, int writeBufferBytes, ByteString unread) {
    return new SocketStage<>(
        endpoint,
        writeBufferBytes,
        outbound -> outbound instanceof TLSProtocol.SendBytes send ? send.bytes() : null,
        bytes -> new TLSProtocol.SessionBytes(NO_TLS, bytes),
        true,
        ByteString.emptyByteString(),
        unread,
        false,
        null);
  }

  /**
   * The stage under a protocol the connection switched to, writing {@code unwritten} first and
   * pushing {@code unread} before it reads the socket; on a plain socket the selector reads for it
   * while it waits for bytes. With {@code pullWhenWritten} it takes the
   * next bytes only once everything before them is written (so that, while it waits for bytes,
   * other threads may write the socket through {@link #output}); otherwise it gathers up to
   * {@code writeBufferBytes} while the socket is full. {@code onWritten}, if not null, is run each
   * time the stage is done with the oldest of the elements it was pushed ({@link
   * SocketOutput.User#written}).
   */
  static SocketStage<ByteString, ByteString> bytes(
      SocketEndpoint endpoint,
      int writeBufferBytes,
      ByteString unwritten,
      ByteString unread,
      boolean pullWhenWritten,
      Runnable onWritten) {
    return new SocketStage<>(
        endpoint, writeBufferBytes, bytes -> bytes, bytes -> bytes, false, unwritten, unread, pullWhenWritten, onWritten);
  }

  /**
   * A plain socket as other threads write it, while the stage serving it has nothing to write:
   * through the writing thread's own direct buffer, in one call.
   */
  static SocketOutput output(SocketEndpoint endpoint) {
    return bytes -> {
      ByteBuffer buffer = WRITE_BUFFER.get();
      buffer.clear();
      (bytes.length() > buffer.capacity() ? bytes.take(buffer.capacity()) : bytes).copyToBuffer(buffer);
      buffer.flip();
      int n = endpoint.write(buffer);
      if (n > 0) {
        endpoint.active();
      }
      return n;
    };
  }

  @Override
  public FlowShape<I, O> shape() {
    return shape;
  }

  @Override
  public GraphStageLogic createLogic(Attributes attributes) {
    return new Logic();
  }

  private final class Logic extends GraphStageLogic implements InHandler, OutHandler {
    /** What is still to be written. */
    private final PendingWrites toWrite = new PendingWrites(onWritten);
    private boolean waitingWritable;
    private boolean closeWhenWritten;
    private boolean shutdownOutputWhenWritten;
    /** Request heads, followed under HTTP only. */
    private final RequestHeads heads = http ? new RequestHeads() : null;
    /** Bytes read and not pushed yet: what was read before the stage started. */
    private ByteString held = unread.isEmpty() ? null : unread;
    /** The selector's reads for the stage, or null when the stage reads the socket itself. */
    private SelectorReads bySelector;

    Logic() {
      super(shape);
      setHandlers(in, out, this);
    }

    @Override
    public void preStart() {
      AsyncCallback<Integer> ready = createAsyncCallback(this::onReady);
      endpoint.attach(ops -> ready.invoke(ops));
      if (selectorReads) {
        AsyncCallback<Object> readBySelector = createAsyncCallback(this::onReadBySelector);
        bySelector = endpoint.readBy(readBySelector::invoke);
      }
      if (!unwritten.isEmpty()) {
        toWrite.addOwn(unwritten);
        write();
      }
      pullIfRoom();
    }

    @Override
    public void postStop() {
      endpoint.close();
    }

    // ---- socket to stream

    @Override
    public void onPull() {
      if (held != null) {
        ByteString bytes = held;
        held = null;
        deliver(bytes);
      } else if (bySelector == null || !bySelector.wantBytes()) {
        read();
      }
    }

    @Override
    public void onDownstreamFinish(Throwable cause) {
      closeWhenWritten();
    }

    private void read() {
      ByteString bytes;
      try {
        bytes = endpoint.readBytes();
      } catch (IOException e) {
        failStage(e);
        return;
      }
      if (bytes == null) {
        complete(out);
      } else if (!bytes.isEmpty()) {
        deliver(bytes);
      } else if (bySelector != null) {
        bySelector.readOnSelector();
      } else {
        endpoint.watch(SelectionKey.OP_READ);
      }
    }

    /** What the selector read for the stage, which waited for bytes. */
    private void onReadBySelector(Object result) {
      if (result instanceof ByteString bytes) {
        if (isAvailable(out)) {
          deliver(bytes);
        } else if (!isClosed(out)) {
          held = bytes;
        }
      } else if (result instanceof IOException e) {
        failStage(e);
      } else if (!isClosed(out)) {
        complete(out);
      }
    }

    /** Pushes bytes read; under HTTP, tells the endpoint whether they end inside a request head. */
    private void deliver(ByteString bytes) {
      if (heads != null && heads.isFollowed()) {
        heads.follow(bytes);
        endpoint.inHead(heads.inHead());
      }
      push(out, wrap.apply(bytes));
    }

    // ---- stream to socket

    @Override
    public void onPush() {
      ByteString bytes = bytesOf.apply(grab(in));
      if (bytes != null) {
        toWrite.add(bytes);
      }
      if (!waitingWritable) {
        write();
      }
      pullIfRoom();
    }

    @Override
    public void onUpstreamFinish() {
      if (http || isClosed(out)) {
        closeWhenWritten();
      } else {
        shutdownOutputWhenWritten = true;
        if (toWrite.isEmpty()) {
          shutdownOutput();
        }
      }
    }

    /** Sends a FIN after what was written; the stage reads on until the stream stops reading. */
    private void shutdownOutput() {
      try {
        endpoint.shutdownOutput();
      } catch (IOException e) {
        failStage(e);
      }
    }

    @Override
    public void onUpstreamFailure(Throwable cause) {
      endpoint.reset();
      failStage(cause);
    }

    /**
     * Writes what is queued: each round copies as many pieces as fit into the thread's direct
     * buffer and writes them in one call, until everything is written (on TLS: and flushed) or the
     * socket is full.
     */
    private void write() {
      try {
        while (!toWrite.isEmpty() || endpoint.unflushed()) {
          ByteBuffer buffer = WRITE_BUFFER.get();
          buffer.clear();
          toWrite.fill(buffer);
          buffer.flip();
          int n = endpoint.write(buffer);
          if (n > 0) {
            endpoint.active();
            toWrite.written(n);
          }
          if (buffer.hasRemaining() || endpoint.unflushed()) {
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
      } else if (shutdownOutputWhenWritten) {
        shutdownOutput();
      }
    }

    private void pullIfRoom() {
      boolean room = pullWhenWritten ? toWrite.isEmpty() && !waitingWritable : toWrite.bytes() < writeBufferBytes;
      if (room && !isClosed(in) && !hasBeenPulled(in)) {
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
      if ((ops & SocketEndpoint.CLOSED) != 0) {
        failStage(new IOException("the server closed the connection"));
        return;
      }
      if ((ops & SelectionKey.OP_WRITE) != 0 && waitingWritable) {
        waitingWritable = false;
        write();
        pullIfRoom();
      }
      if ((ops & SelectionKey.OP_READ) != 0 && !selectorReads && isAvailable(out) && held == null) {
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
