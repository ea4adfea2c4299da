package io.relay.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import tlschannel.ClientTlsChannel;
import tlschannel.NeedsWriteException;
import tlschannel.TlsChannel;
import tlschannel.WouldBlockException;

/**
 * One load-generator WebSocket connection, driven by its {@link EventLoop}'s thread only: it does
 * the upgrade, writes benchmark frames and parses the frames it receives without copying their
 * payloads (only the 20-byte benchmark header of each message is read).
 *
 * <p>Client frames are masked with the all-zero key (legal, and the server does the same unmasking
 * work for any key), so sending needs no XOR pass; a frame is a small header buffer plus a shared,
 * read-only filler buffer.
 *
 * <p>A {@code wss} URI is served over TLS on the same non-blocking socket ({@link Tls}, with
 * tls-channel doing the record layer): the handshake first, then the same upgrade and frames.
 *
 * <p>Why one class of over 300 lines: the upgrade, writing and the frame parser share one
 * connection's buffers and run on one event-loop thread; a load generator that copies or hands
 * over between objects would measure itself instead of the server.
 */
final class WsClient implements SelectorLoop.Ready {
  /** Bytes at the start of every benchmark message: send time (ns), sequence number, writer id. */
  static final int HEAD = 20;
  private static final int MAX_PENDING_BUFFERS = 64;

  final int id;
  URI uri;
  final EventLoop loop;
  /** The writer whose messages this connection expects to read, or -1 for none. */
  final int expectWriter;
  final CompletableFuture<WsClient> opened = new CompletableFuture<>();
  long connectStartNanos;
  long connectNanos;

  private SocketChannel channel;
  /** The TLS layer over {@link #channel} for a wss URI, else null. */
  private TlsChannel secure;
  private boolean handshaking;
  /** The TLS layer cannot go on until the socket takes more (set by a read or a write). */
  private boolean wantsWrite;
  /** The negotiated cipher suite of a wss connection. */
  String suite;
  private SelectionKey key;
  private boolean open;
  private boolean closed;
  int closeCode;
  private final StringBuilder response = new StringBuilder();
  private final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>();
  private final ByteBuffer[] gather = new ByteBuffer[MAX_PENDING_BUFFERS];
  long pendingBytes;

  // writing
  long seq;
  long sentBytes;

  // reading: frame parser state
  private final byte[] header = new byte[14];
  private int headerLen;
  private int headerNeed = 2;
  private long payloadLeft = -1;
  private int opcode;
  private boolean fin;
  private int messageOpcode;
  private final byte[] head = new byte[HEAD];
  private int headLen;
  private long messageBytes;
  private final byte[] control = new byte[125];
  private int controlLen;

  // reading: what arrived (thread-confined to the loop, read by others only after the loop stops)
  volatile long received;
  /** Closed-loop mode: the writer this reader's messages give credit to, or null. */
  EventLoop.Writer creditTo;
  long expectedSeq;
  long maxSeq = -1;
  long lost;
  long reordered;
  long foreign;

  WsClient(int id, EventLoop loop, int expectWriter) {
    this.id = id;
    this.loop = loop;
    this.expectWriter = expectWriter;
  }

  boolean isOpen() {
    return open && !closed;
  }

  boolean isClosed() {
    return closed;
  }

  /** Starts connecting; runs on the loop thread. */
  void start() {
    try {
      channel = SocketChannel.open();
      channel.configureBlocking(false);
      channel.socket().setTcpNoDelay(true);
      boolean wss = "wss".equals(uri.getScheme());
      int port = uri.getPort() > 0 ? uri.getPort() : wss ? 443 : 80;
      if (wss) {
        if (loop.tls() == null) {
          throw new IOException("a wss URI needs --tls-ca");
        }
        secure = ClientTlsChannel.newBuilder(channel, loop.tls().engine(uri.getHost(), port)).build();
      }
      channel.connect(new InetSocketAddress(uri.getHost(), port));
      key = channel.register(loop.selector(), SelectionKey.OP_CONNECT, this);
    } catch (IOException e) {
      fail(e);
    }
  }

  @Override
  public void onReady(SelectionKey k) {
    try {
      if (k.isConnectable()) {
        channel.finishConnect();
        k.interestOps(SelectionKey.OP_READ);
        handshaking = secure != null;
        if (!handshaking) {
          sendUpgrade();
          return;
        }
      }
      wantsWrite = false;
      if (handshaking) {
        handshake();
        return;
      }
      if (k.isWritable()) {
        flush();
      }
      if (k.isReadable() || secure != null) { // a TLS read may have waited for the socket to take a write
        read();
      }
    } catch (IOException | RuntimeException e) {
      fail(e);
    }
  }

  /** Goes on with the TLS handshake; once it is done, sends the upgrade. */
  private void handshake() throws IOException {
    try {
      secure.handshake();
    } catch (WouldBlockException e) {
      waitForSocket(e);
      return;
    }
    handshaking = false;
    suite = secure.getSslEngine().getSession().getCipherSuite();
    sendUpgrade();
  }

  private void sendUpgrade() throws IOException {
    String path = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String request =
        "GET " + path + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
            + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
    pending.add(ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII)));
    flush();
  }

  /**
   * Reads what the socket holds. A TLS connection reads until the layer needs the socket again:
   * it may hold decrypted bytes the selector cannot see.
   */
  private void read() throws IOException {
    ByteBuffer buf = loop.readBuffer();
    for (int i = 0; secure != null || i < 16; i++) {
      buf.clear();
      int n;
      try {
        n = secure != null ? secure.read(buf) : channel.read(buf);
      } catch (WouldBlockException e) {
        waitForSocket(e);
        return;
      }
      if (n < 0) {
        fail(new IOException("connection closed by the server" + (closeCode != 0 ? " with " + closeCode : "")));
        return;
      }
      if (n == 0) {
        return;
      }
      buf.flip();
      if (!open) {
        readResponse(buf);
      }
      if (open) {
        parse(buf, System.nanoTime());
      }
      if (secure == null && n < buf.capacity()) {
        return;
      }
    }
  }

  private void readResponse(ByteBuffer buf) throws IOException {
    while (buf.hasRemaining()) {
      response.append((char) buf.get());
      int len = response.length();
      if (len >= 4 && response.charAt(len - 1) == '\n' && response.lastIndexOf("\r\n\r\n") == len - 4) {
        String status = response.substring(0, Math.max(0, response.indexOf("\r\n")));
        if (!status.contains(" 101")) {
          throw new IOException("upgrade refused: " + status);
        }
        open = true;
        connectNanos = System.nanoTime() - connectStartNanos;
        response.setLength(0);
        opened.complete(this);
        return;
      }
      if (len > 8192) {
        throw new IOException("upgrade response too long");
      }
    }
  }

  private void parse(ByteBuffer buf, long now) {
    while (buf.hasRemaining()) {
      if (payloadLeft < 0) {
        header[headerLen++] = buf.get();
        if (headerLen == 2) {
          int len7 = header[1] & 0x7F;
          headerNeed = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((header[1] & 0x80) != 0 ? 4 : 0);
        }
        if (headerLen >= 2 && headerLen == headerNeed) {
          startFrame();
          if (payloadLeft == 0) {
            endFrame(now);
          }
        }
        continue;
      }
      int n = (int) Math.min(buf.remaining(), payloadLeft);
      int pos = buf.position();
      if (opcode >= 0x8) {
        buf.get(control, controlLen, n);
        controlLen += n;
      } else {
        if (headLen < HEAD) {
          int take = Math.min(n, HEAD - headLen);
          buf.get(head, headLen, take);
          headLen += take;
        }
        messageBytes += n;
        buf.position(pos + n);
      }
      payloadLeft -= n;
      if (payloadLeft == 0) {
        endFrame(now);
      }
    }
  }

  private void startFrame() {
    opcode = header[0] & 0x0F;
    fin = (header[0] & 0x80) != 0;
    int len7 = header[1] & 0x7F;
    long len = len7;
    if (len7 == 126) {
      len = ((header[2] & 0xFF) << 8) | (header[3] & 0xFF);
    } else if (len7 == 127) {
      len = 0;
      for (int i = 2; i < 10; i++) {
        len = (len << 8) | (header[i] & 0xFF);
      }
    }
    payloadLeft = len;
    headerLen = 0;
    headerNeed = 2;
    if (opcode >= 0x8) {
      controlLen = 0;
    } else if (opcode != 0) {
      messageOpcode = opcode;
      headLen = 0;
      messageBytes = 0;
    }
  }

  private void endFrame(long now) {
    payloadLeft = -1;
    if (opcode == 0x9) {
      byte[] body = java.util.Arrays.copyOf(control, controlLen);
      enqueue(frameHeader(0xA, body.length), ByteBuffer.wrap(body));
      flushQuietly();
    } else if (opcode == 0x8) {
      closeCode = controlLen >= 2 ? ((control[0] & 0xFF) << 8) | (control[1] & 0xFF) : 1005;
      enqueue(frameHeader(0x8, 2), ByteBuffer.wrap(new byte[] {control[0], control[1]}));
      flushQuietly();
      close();
    } else if (opcode < 0x8 && fin) {
      onMessage(now);
    }
  }

  /** Wakes the loop of the writer this reader gives credit to, if it waits for it. */
  private void gaveCredit() {
    EventLoop.Writer writer = creditTo;
    if (writer != null && writer.awaitingCredit) {
      writer.awaitingCredit = false;
      writer.client.loop.wakeup();
    }
  }

  private void onMessage(long now) {
    received++;
    gaveCredit();
    long bytes = messageBytes;
    if (headLen < HEAD || messageOpcode == 0x8) {
      loop.stats().delivered(0, bytes);
      return;
    }
    long sentAt = longAt(head, 0);
    long s = longAt(head, 8);
    int writer = ((head[16] & 0xFF) << 24) | ((head[17] & 0xFF) << 16) | ((head[18] & 0xFF) << 8) | (head[19] & 0xFF);
    if (writer != expectWriter) {
      foreign++;
      return;
    }
    if (s > expectedSeq) {
      lost += s - expectedSeq;
      loop.stats().lost += s - expectedSeq;
    } else if (s < expectedSeq) {
      reordered++;
      loop.stats().reordered++;
    }
    expectedSeq = Math.max(expectedSeq, s + 1);
    maxSeq = Math.max(maxSeq, s);
    loop.stats().delivered(now - sentAt, bytes);
  }

  private static long longAt(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[off + i] & 0xFF);
    }
    return v;
  }

  /** Sends one benchmark message of {@code size} bytes (at least {@link #HEAD}) now. */
  void sendMessage(int writerId, int size, ByteBuffer filler, long nowNanos) {
    ByteBuffer hdr = frameHeader(0x2, size, HEAD);
    hdr.putLong(nowNanos).putLong(seq++).putInt(writerId).flip();
    ByteBuffer rest = filler.duplicate();
    rest.limit(size - HEAD);
    enqueue(hdr, rest);
    sentBytes += size;
    flushQuietly();
  }

  private static ByteBuffer frameHeader(int op, int length) {
    ByteBuffer b = frameHeader(op, length, 0);
    b.flip();
    return b;
  }

  /** A masked (all-zero key) final frame header with room for {@code extra} more bytes. */
  private static ByteBuffer frameHeader(int op, int length, int extra) {
    ByteBuffer b = ByteBuffer.allocate(14 + extra);
    b.put((byte) (0x80 | op));
    if (length < 126) {
      b.put((byte) (0x80 | length));
    } else if (length < 65536) {
      b.put((byte) (0x80 | 126)).putShort((short) length);
    } else {
      b.put((byte) (0x80 | 127)).putLong(length);
    }
    b.putInt(0);
    return b;
  }

  private void enqueue(ByteBuffer a, ByteBuffer b) {
    pending.add(a);
    pending.add(b);
    pendingBytes += a.remaining() + b.remaining();
  }

  private void flushQuietly() {
    try {
      flush();
    } catch (IOException e) {
      fail(e);
    }
  }

  private void flush() throws IOException {
    if (closed || channel == null || !channel.isConnected()) {
      return;
    }
    while (!pending.isEmpty()) {
      int count = 0;
      for (ByteBuffer b : pending) {
        gather[count++] = b;
        if (count == MAX_PENDING_BUFFERS) {
          break;
        }
      }
      long n;
      try {
        n = secure != null ? secure.write(gather, 0, count) : channel.write(gather, 0, count);
      } catch (WouldBlockException e) {
        waitForSocket(e);
        n = 0;
      }
      pendingBytes -= n;
      while (!pending.isEmpty() && !pending.peekFirst().hasRemaining()) {
        pending.pollFirst();
      }
      java.util.Arrays.fill(gather, 0, count, null);
      if (n == 0 || (!pending.isEmpty() && count < MAX_PENDING_BUFFERS)) {
        break;
      }
    }
    updateInterest();
  }

  /** The TLS layer waits for the socket: to take a write (then watched for), or to bring more to read. */
  private void waitForSocket(WouldBlockException e) {
    if (e instanceof NeedsWriteException) {
      wantsWrite = true;
      updateInterest();
    }
  }

  private void updateInterest() {
    if (key != null && key.isValid()) {
      int ops = pending.isEmpty() && !wantsWrite ? SelectionKey.OP_READ : SelectionKey.OP_READ | SelectionKey.OP_WRITE;
      if (key.interestOps() != ops) {
        key.interestOps(ops);
      }
    }
  }

  private void fail(Throwable cause) {
    if (!opened.isDone()) {
      opened.completeExceptionally(cause);
    }
    if (!closed) {
      loop.stats().closedByServer++;
    }
    close();
  }

  /** Closes the socket at once (no closing handshake); used at the end of a run. */
  void close() {
    closed = true;
    if (key != null) {
      key.cancel();
    }
    try {
      if (channel != null) {
        channel.close();
      }
    } catch (IOException ignored) {
      // closing a socket of a finished run
    }
  }
}
