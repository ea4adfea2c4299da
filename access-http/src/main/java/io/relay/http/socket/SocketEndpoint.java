package io.relay.http.socket;

import io.relay.ws.ReadArrays;
import io.relay.ws.SocketReads;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import javax.net.ssl.SSLContext;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.util.ByteString;
import tlschannel.NeedsReadException;
import tlschannel.NeedsTaskException;
import tlschannel.NeedsWriteException;
import tlschannel.ServerTlsChannel;
import tlschannel.TlsChannel;

/**
 * One accepted socket of a {@link SocketServer}, as the stage that serves it and the server's
 * selector thread share it: reading and writing, readiness handed to the stage, interest and
 * activity, closing, and serving it with a protocol's flow once its upgrade request is answered.
 *
 * <p>On a TLS port the bytes read and written are the plain text of a TLS layer over the socket
 * (tls-channel's {@link ServerTlsChannel}, the JDK's {@code SSLEngine} underneath), and the
 * readers and writers above see the same contract as on plain TCP: {@link #read} returns 0 and
 * {@link #write} takes less than offered when they must wait, and {@link #watch} waits for what
 * the TLS layer needs, which may be the other direction (a read that must first write a handshake
 * message). The handshake's expensive steps (signing) run on {@code tasks}, not on the thread that
 * happened to read. Its buffers are taken from the heap and given back whenever they are empty,
 * so an idle TLS connection holds only its {@code SSLEngine}; each thread reuses the ones given
 * back ({@link TlsBuffers}).
 *
 * <p>A plain socket whose stage has the selector read for it ({@link #readBy}) is read on the
 * selector thread whenever its stage waits for bytes ({@link SelectorReads}).
 *
 * <p>Why one class of over 400 lines: it is the one object through which the selector thread and
 * the socket's stage share a socket, and each of its parts (reads, writes, the TLS layer's waits,
 * interest, readiness, activity and closing) changes the same key and the same socket's state;
 * the selector's reads for the stage ({@link SelectorReads}) and the TLS buffers ({@link
 * TlsBuffers}) are their own classes.
 */
final class SocketEndpoint implements SocketReads {
  private static final TlsBuffers BUFFERS = new TlsBuffers();
  /** Readiness value telling the stage that the server closed the socket under it. */
  static final int CLOSED = 1 << 30;
  /** The most one read takes. */
  private static final int READ_BYTES = 128 * 1024;
  /** Each thread's read buffer: a read copies exactly the bytes it got out of it. */
  private static final ThreadLocal<ByteBuffer> READ_BUFFER =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(READ_BYTES));
  /** Each thread's buffer for the plain text of TLS reads. */
  private static final ThreadLocal<ByteBuffer> TLS_READ_BUFFER =
      ThreadLocal.withInitial(() -> ByteBuffer.allocate(READ_BYTES));
  private final SocketServer server;
  private final PortSelector selector;
  private final SocketChannel channel;
  /** The TLS layer over {@link #channel}, or null on a plain port. */
  private final TlsChannel tls;
  private final Executor tasks;
  private final SelectionKey key;
  /** What the socket must become for the last TLS read, and write, to go on (0: a task runs). */
  private volatile int readWaitsFor = SelectionKey.OP_READ;
  private volatile int writeWaitsFor = SelectionKey.OP_WRITE;
  /** The TLS layer holds written bytes the socket has not taken yet. */
  private volatile boolean unflushed;
  private volatile IntConsumer onReady;
  /** The selector's reads for the stage, or null when the stage reads itself. */
  private volatile SelectorReads selectorReads;
  private volatile long lastActive = System.nanoTime();
  /** The most the next read takes ({@link #nextReadAtMost}). */
  private volatile int readLimit = READ_BYTES;
  /** The last read, if it is the first bytes of an array of {@link ReadArrays} not asked for yet. */
  private volatile Lent lent;
  /**
   * When the request head being received started ({@link System#nanoTime}), or 0 for none. A new
   * connection waits for its first head from the start.
   */
  private volatile long headStarted = System.nanoTime();
  /** When the server sent its last bytes and began waiting for the peer to close, or 0. */
  private volatile long lingerStarted;

  /**
   * @param tls the context of a TLS port, or null for plain TCP
   * @param tasks where the TLS handshake's expensive steps run
   */
  SocketEndpoint(
      SocketServer server, PortSelector selector, SocketChannel channel, SelectionKey key, SSLContext tls, Executor tasks) {
    this.server = server;
    this.selector = selector;
    this.channel = channel;
    this.tls =
        tls == null
            ? null
            : ServerTlsChannel.newBuilder(channel, tls)
                .withRunTasks(false)
                .withPlainBufferAllocator(BUFFERS)
                .withEncryptedBufferAllocator(BUFFERS)
                .build();
    this.tasks = tasks;
    this.key = key;
    key.attach(this);
  }

  SocketChannel channel() {
    return channel;
  }

  /** The selector thread that serves the socket. */
  PortSelector selector() {
    return selector;
  }

  /** Whether the socket's bytes go through a TLS layer. */
  boolean isTls() {
    return tls != null;
  }

  /**
   * Reads into {@code buffer}: the number of bytes read, 0 when none can be read now (then
   * {@link #watch} {@code OP_READ}), -1 when the peer has closed.
   */
  int read(ByteBuffer buffer) throws IOException {
    if (tls == null) {
      return channel.read(buffer);
    }
    try {
      return tls.read(buffer);
    } catch (NeedsReadException e) {
      readWaitsFor = SelectionKey.OP_READ;
    } catch (NeedsWriteException e) {
      readWaitsFor = SelectionKey.OP_WRITE;
    } catch (NeedsTaskException e) {
      readWaitsFor = 0;
      runTask(e.getTask());
    } catch (RuntimeException | AssertionError e) {
      throw failed(e);
    }
    return 0;
  }

  /**
   * Reads what the socket holds, up to 128 KiB or what the socket's protocol asked for ({@link
   * #nextReadAtMost}), into an array of its own: the bytes read, empty when none can be read now
   * (then {@link #watch} {@code OP_READ}), or null when the peer has closed. A plain socket is read
   * through the calling thread's direct buffer. On TLS the plain text is decrypted into the
   * thread's heap buffer (no system call reads it, so it need not be direct), and the read goes
   * on record after record until it has what was asked for or nothing is left to decrypt: one
   * read of the TLS layer takes one record (16 KiB at most), and a large message then arrives
   * whole in one read, as on the plain port. A large read is copied into an array of {@link
   * ReadArrays}, lent to the protocol that asks for it ({@link #lentArray}).
   */
  ByteString readBytes() throws IOException {
    ByteBuffer buffer = tls == null ? READ_BUFFER.get() : TLS_READ_BUFFER.get();
    buffer.clear();
    buffer.limit(readLimit);
    int n = read(buffer);
    if (n < 0) {
      return null;
    }
    if (n == 0) {
      return ByteString.emptyByteString();
    }
    byte[] bytes;
    if (tls == null) {
      buffer.flip();
      bytes = ReadArrays.take(n);
      buffer.get(bytes, 0, n);
    } else {
      // the TLS layer hands over one record a read: read on up to the limit
      int more;
      while (buffer.hasRemaining() && (more = read(buffer)) > 0) {
        n += more;
      }
      bytes = ReadArrays.copyOf(buffer.array(), n);
    }
    active();
    if (!ReadArrays.pooled(n)) {
      return ByteString.fromArrayUnsafe(bytes);
    }
    ByteString read = ByteString.fromArrayUnsafe(bytes, 0, n);
    lent = new Lent(read, bytes);
    return read;
  }

  /** The socket's next reads take at most {@code bytes} (at least 1, at most 128 KiB). */
  @Override
  public void nextReadAtMost(int bytes) {
    readLimit = Math.max(1, Math.min(READ_BYTES, bytes));
  }

  @Override
  public byte[] lentArray(ByteString read) {
    Lent last = lent;
    if (last == null || last.read != read) {
      return null;
    }
    lent = null;
    return last.array;
  }

  /**
   * Has the selector read the socket for its stage whenever the stage waits for bytes, handing
   * {@code reader} each read: a {@link ByteString}, {@link SelectorReads#PEER_CLOSED} or the
   * {@link IOException}. Plain sockets only.
   */
  SelectorReads readBy(Consumer<Object> reader) {
    if (tls != null) {
      throw new IllegalStateException("the selector reads plain sockets only");
    }
    SelectorReads reads = new SelectorReads(this, key, reader);
    selectorReads = reads;
    return reads;
  }

  /**
   * On the selector thread: the socket is ready for {@code ops}. A socket read for its stage is
   * read here; all other readiness goes to the stage and is watched for no more until it asks.
   */
  void selected(int ops) {
    SelectorReads reads = selectorReads;
    int rest = ops;
    if (reads != null && (ops & SelectionKey.OP_READ) != 0) {
      rest &= ~SelectionKey.OP_READ;
      reads.readable();
    }
    if (rest != 0) {
      key.interestOpsAnd(~rest);
      ready(rest);
    }
  }

  /**
   * Writes from {@code buffer} and returns how many of its bytes were taken; while it has some
   * left, or {@link #unflushed}, {@link #watch} {@code OP_WRITE} and write again.
   */
  int write(ByteBuffer buffer) throws IOException {
    if (tls == null) {
      return channel.write(buffer);
    }
    int before = buffer.position();
    try {
      tls.write(buffer);
      unflushed = false;
    } catch (NeedsWriteException e) {
      writeWaitsFor = SelectionKey.OP_WRITE;
      unflushed = true;
    } catch (NeedsReadException e) {
      writeWaitsFor = SelectionKey.OP_READ;
      unflushed = true;
    } catch (NeedsTaskException e) {
      writeWaitsFor = 0;
      unflushed = true;
      runTask(e.getTask());
    } catch (RuntimeException | AssertionError e) {
      throw failed(e);
    }
    return buffer.position() - before;
  }

  /** Whether the TLS layer holds bytes taken by {@link #write} that the socket has not taken yet. */
  boolean unflushed() {
    return unflushed;
  }

  /**
   * Ends the output after what was written, and reads on: on TLS with a {@code close_notify}
   * first (as far as the socket takes it now), then a FIN. TLS 1.3 lets the peer go on sending
   * after a {@code close_notify}; the engine's inbound side stays open (tls-channel's own {@code
   * shutdown} would also stop reading, so the alert is made by the engine directly: once its
   * outbound side is closed, wrapping anything produces the alert and takes no byte).
   */
  void shutdownOutput() throws IOException {
    if (tls != null) {
      tls.getSslEngine().closeOutbound();
      try {
        tls.write(ByteBuffer.allocate(1));
        tls.write(ByteBuffer.allocate(0));
      } catch (NeedsWriteException | NeedsReadException e) {
        // the socket is full: the FIN still ends the connection for the peer
      } catch (RuntimeException | AssertionError e) {
        throw failed(e);
      }
    }
    channel.shutdownOutput();
  }

  /**
   * Runs a TLS handshake step off this thread; then whoever waits on the socket goes on (and, if
   * the step failed, meets the engine's failure in its next read or write).
   */
  private void runTask(Runnable task) {
    tasks.execute(
        () -> {
          try {
            task.run();
          } finally {
            readWaitsFor = SelectionKey.OP_READ;
            writeWaitsFor = SelectionKey.OP_WRITE;
            ready(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
          }
        });
  }

  /**
   * A failure inside the TLS layer other than an I/O error (an engine or library bug, a state it
   * did not expect) as the I/O error of this one connection, which its reader or writer then
   * closes: it must not escape to the selector thread, which serves the whole port.
   */
  private static IOException failed(Throwable cause) {
    return new IOException("the TLS layer failed: " + cause, cause);
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

  /**
   * Reports readiness for {@code op} (OP_READ or OP_WRITE) once; on TLS, when what the last read
   * or write needs has happened.
   */
  void watch(int op) {
    int interest = tls == null ? op : op == SelectionKey.OP_READ ? readWaitsFor : writeWaitsFor;
    if (interest == 0) {
      return; // a handshake task runs and reports when it is done
    }
    try {
      key.interestOpsOr(interest);
      selector.wakeup();
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

  /**
   * The socket is ready for {@code ops}, or {@link #CLOSED}. On TLS either direction may be what a
   * read or a write waited for: both are told to try again.
   */
  void ready(int ops) {
    IntConsumer target = onReady;
    if (target != null) {
      boolean closed = (ops & CLOSED) != 0;
      target.accept(tls == null || closed ? ops : SelectionKey.OP_READ | SelectionKey.OP_WRITE);
    }
  }

  /**
   * Closes the socket (the stage stopped). A channel registered with a selector is only really
   * closed once the selector deregisters it, so the selector is woken to do that now.
   */
  void close() {
    closeQuietly(channel);
    selector.wakeup();
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

  /** A read handed on as a view of the first bytes of {@code array}, an array of {@link ReadArrays}. */
  private record Lent(ByteString read, byte[] array) {}
}
