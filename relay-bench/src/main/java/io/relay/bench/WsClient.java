package io.relay.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.SSLException;
import tlschannel.ClientTlsChannel;
import tlschannel.NeedsWriteException;
import tlschannel.TlsChannel;
import tlschannel.WouldBlockException;

/**
 * One load-generator WebSocket connection, driven by its {@link EventLoop}'s thread only: it does
 * the upgrade, writes benchmark frames ({@link OutgoingFrames}) and counts the messages it
 * receives ({@link ReceivedFrames}, which reads only the 20-byte benchmark header of each; {@link
 * Arrivals}).
 *
 * <p>A {@code wss} URI is served over TLS on the same non-blocking socket ({@link Tls}, with
 * tls-channel doing the record layer): the handshake first, then the same upgrade and frames.
 */
final class WsClient implements SelectorLoop.Ready, ReceivedFrames.Handler {
  /** Bytes at the start of every benchmark message: send time (ns), sequence number, writer id. */
  static final int HEAD = 20;

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
  private final OutgoingFrames pending = new OutgoingFrames();
  private final ReceivedFrames frames = new ReceivedFrames();

  // writing
  long seq;
  long sentBytes;

  // reading
  final Arrivals arrivals;

  WsClient(int id, EventLoop loop, int expectWriter) {
    this.id = id;
    this.loop = loop;
    this.expectWriter = expectWriter;
    this.arrivals = new Arrivals(expectWriter);
  }

  boolean isOpen() {
    return open && !closed;
  }

  boolean isClosed() {
    return closed;
  }

  /** Bytes written to the connection that its socket has not taken yet. */
  long pendingBytes() {
    return pending.bytes();
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
    if (!suite.equals(loop.tls().suite())) {
      throw new IOException("negotiated " + suite + ", not " + loop.tls().suite() + ": the servers would not be measured doing the same cryptography");
    }
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
        frames.parse(buf, System.nanoTime(), this);
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

  @Override
  public void onPing(byte[] payload) {
    pending.frame(0xA, payload);
    flushQuietly();
  }

  @Override
  public void onClose(int code) {
    closeCode = code;
    pending.frame(0x8, new byte[] {(byte) (code >> 8), (byte) code});
    flushQuietly();
    close();
  }

  @Override
  public void onMessage(int opcode, byte[] head, int headLength, long bytes, long now) {
    arrivals.message(opcode, head, headLength, bytes, now, loop.stats());
  }

  /** Sends one benchmark message of {@code size} bytes (at least {@link #HEAD}) now. */
  void sendMessage(int writerId, int size, ByteBuffer filler, long nowNanos) {
    ByteBuffer hdr = OutgoingFrames.header(0x2, size, HEAD);
    hdr.putLong(nowNanos).putLong(seq++).putInt(writerId).flip();
    ByteBuffer rest = filler.duplicate();
    rest.limit(size - HEAD);
    pending.add(hdr, rest);
    sentBytes += size;
    flushQuietly();
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
    try {
      pending.writeTo(secure != null ? secure : channel);
    } catch (WouldBlockException e) {
      waitForSocket(e);
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
    if (secure != null) { // BoringSSL's engine frees its native state once both its sides are closed
      secure.getSslEngine().closeOutbound();
      try {
        secure.getSslEngine().closeInbound();
      } catch (SSLException ignored) {
        // no close_notify from the server: the socket is cut, not closed
      }
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
