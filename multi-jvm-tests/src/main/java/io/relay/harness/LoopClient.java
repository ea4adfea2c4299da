package io.relay.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.bench.SelectorLoop;
import io.relay.client.ReconnectPolicy;
import io.relay.client.ReconnectingClient;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;

/**
 * The harness's relay client: what {@link ReconnectingClient} does (POST the token for a one-time
 * code, connect to the URI it names, reconnect when {@link ReconnectPolicy} says), on non-blocking
 * sockets driven by a {@link SelectorLoop}, so that thousands of participants cost one thread and see
 * a connection end as soon as the kernel reports it. HTTP/1.1 and the client side of RFC 6455 are
 * spoken directly: a fresh connection with {@code Connection: close} for each code, the opening
 * handshake with its {@code Sec-WebSocket-Accept} checked, masked frames out, whole messages in
 * (continuations joined), pings answered, the server's close echoed. Every method runs on the
 * loop's thread; {@link #start} and {@link #close} hand themselves over.
 *
 * <p>Given a silence limit, an open connection from which nothing (no frame, not even a ping: the
 * relay pings a connection it has sent nothing to for half its {@code RELAY_PING_INTERVAL}) has
 * arrived for that long is given up as dead (1006) and the client reconnects: what a client must
 * do to leave a node that is cut off from the network, whose connections end without a sound.
 *
 * <p>Why one class of over 500 lines: it is one non-blocking client's state machine (the POST for
 * a code, the handshake, frames, the close, the retry) over one socket's channel, key, buffers and
 * deadline, driven from one selector loop's thread; every phase reads and writes that same state,
 * so split apart, each piece would need it handed over and the loop's single-thread rule restated.
 */
final class LoopClient implements SelectorLoop.Ready {
  /** How long a code request or an upgrade may take before the attempt counts as unanswered. */
  private static final long ATTEMPT_DEADLINE_MILLIS = 10_000;
  private static final int MAX_HEAD = 16 * 1024;
  private static final ObjectMapper JSON = new ObjectMapper();

  private enum Phase { IDLE, CODE, UPGRADE, OPEN }

  private final SelectorLoop loop;
  private final URI access;
  private final String topic;
  private final String token;
  private final URI relayBase;
  private final ReconnectPolicy policy;
  private final ReconnectingClient.Listener listener;
  /** How long an open connection may stay silent before it is given up; 0: forever. */
  private final long silenceMillis;

  private volatile boolean stopped;
  private Phase phase = Phase.IDLE;
  private int attempts;
  private SocketChannel channel;
  private SelectionKey key;
  private SelectorLoop.Timer deadline;
  private SelectorLoop.Timer silenceWatch;
  private long lastInNanos;
  private String expectedAccept;
  private ByteBuffer in = ByteBuffer.allocate(4096);
  private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
  /** The message being joined from its frames, and its opcode (1 text, 2 binary; 0 none). */
  private byte[] message = new byte[0];
  private int messageLength;
  private int messageOpcode;

  /**
   * @param relayBase where to connect (scheme, host, port) instead of where the code's URI points,
   *     for a client behind another ingress replica; null to follow the URI
   */
  LoopClient(
      SelectorLoop loop, URI access, String topic, String token, URI relayBase, ReconnectPolicy policy, ReconnectingClient.Listener listener) {
    this(loop, access, topic, token, relayBase, policy, listener, Duration.ZERO);
  }

  /** @param silence how long an open connection may stay silent before it is given up; zero: forever */
  LoopClient(
      SelectorLoop loop, URI access, String topic, String token, URI relayBase, ReconnectPolicy policy, ReconnectingClient.Listener listener,
      Duration silence) {
    this.silenceMillis = silence.toMillis();
    this.loop = loop;
    this.access = access;
    this.topic = topic;
    this.token = token;
    this.relayBase = relayBase;
    this.policy = policy;
    this.listener = listener;
  }

  void start() {
    loop.execute(this::connect);
  }

  boolean isStopped() {
    return stopped;
  }

  /** Sends a text message if a connection is open; returns whether it was written to it. */
  boolean sendText(String text) {
    if (phase != Phase.OPEN) {
      return false;
    }
    write(ClientWire.masked(0x1, text.getBytes(StandardCharsets.UTF_8)));
    return phase == Phase.OPEN;
  }

  /** Stops for good: a normal close on an open connection, no reconnect. */
  void close() {
    stopped = true;
    loop.execute(
        () -> {
          if (phase == Phase.OPEN) {
            write(ClientWire.masked(0x8, ClientWire.closePayload(1000)));
          }
          drop();
        });
  }

  private void connect() {
    if (stopped || phase != Phase.IDLE) {
      return;
    }
    attempts++;
    URI target = access.resolve("/session/" + topic);
    String request =
        "POST " + target.getRawPath() + " HTTP/1.1\r\nHost: " + target.getRawAuthority() + "\r\nAuthorization: " + token
            + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    open(Phase.CODE, target, request);
  }

  private void upgrade(String uri) {
    URI given = URI.create(uri);
    URI target =
        relayBase == null ? given : URI.create(relayBase.getScheme() + "://" + relayBase.getRawAuthority() + given.getRawPath() + "?" + given.getRawQuery());
    if (!"ws".equals(target.getScheme())) {
      refused(0, "the harness client speaks ws only, not " + target.getScheme(), Duration.ZERO);
      return;
    }
    String key = ClientWire.newKey();
    expectedAccept = ClientWire.accept(key);
    String request =
        "GET " + target.getRawPath() + (target.getRawQuery() == null ? "" : "?" + target.getRawQuery()) + " HTTP/1.1\r\nHost: "
            + target.getRawAuthority() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key
            + "\r\nSec-WebSocket-Version: 13\r\n\r\n";
    open(Phase.UPGRADE, target, request);
  }

  private void open(Phase next, URI target, String request) {
    phase = next;
    in.clear();
    deadline = loop.schedule(ATTEMPT_DEADLINE_MILLIS, () -> refused(0, "no answer within " + ATTEMPT_DEADLINE_MILLIS + " ms", Duration.ZERO));
    try {
      channel = SocketChannel.open();
      channel.configureBlocking(false);
      channel.socket().setTcpNoDelay(true);
      out.add(ByteBuffer.wrap(request.getBytes(StandardCharsets.ISO_8859_1)));
      int port = target.getPort() > 0 ? target.getPort() : 80;
      if (channel.connect(new InetSocketAddress(target.getHost(), port))) {
        key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
        flush();
      } else {
        key = channel.register(loop.selector(), SelectionKey.OP_CONNECT, this);
      }
    } catch (IOException | RuntimeException e) {
      refused(0, String.valueOf(e.getMessage()), Duration.ZERO);
    }
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
      lost(String.valueOf(e.getMessage()));
    }
  }

  /** Reads until the socket has no more, or the attempt moved on to another socket (or none). */
  private void read() throws IOException {
    ByteBuffer buffer = loop.readBuffer();
    SocketChannel reading = channel;
    while (channel == reading) {
      buffer.clear();
      int n = channel.read(buffer);
      if (n > 0) {
        lastInNanos = System.nanoTime();
        buffer.flip();
        append(buffer);
        consume();
      }
      if (n < 0) {
        ended();
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

  /** Acts on what has arrived: an answer's head (and body), or frames. */
  private void consume() {
    if (phase == Phase.CODE) {
      codeAnswer(false);
    } else if (phase == Phase.UPGRADE) {
      upgradeAnswer();
    }
    if (phase == Phase.OPEN) {
      frames();
    }
  }

  /** The server closed its side. */
  private void ended() {
    if (phase == Phase.CODE) {
      codeAnswer(true);
    } else if (phase == Phase.OPEN) {
      closed(1006, "connection ended without a close frame");
    } else {
      refused(0, "connection ended before an answer", Duration.ZERO);
    }
  }

  /** The connection failed (reset, refused): no answer during an attempt, 1006 once open. */
  private void lost(String why) {
    if (phase == Phase.OPEN) {
      closed(1006, why);
    } else if (phase != Phase.IDLE) {
      refused(0, why, Duration.ZERO);
    }
  }

  private void codeAnswer(boolean atEnd) {
    ResponseHead head = ResponseHead.parse(in);
    if (head == null) {
      if (atEnd || in.position() > MAX_HEAD) {
        refused(0, "no complete answer to the code request", Duration.ZERO);
      }
      return;
    }
    String length = head.header("content-length");
    int bodyLength = in.position() - head.length();
    if (length != null ? bodyLength < Integer.parseInt(length.trim()) : !atEnd) {
      return;
    }
    String body = new String(in.array(), head.length(), length != null ? Integer.parseInt(length.trim()) : bodyLength, StandardCharsets.UTF_8);
    if (head.status() != 200) {
      refused(head.status(), "access API answered " + head.status() + ": " + body, ReconnectPolicy.retryAfter(head.header("retry-after")));
      return;
    }
    String uri;
    try {
      JsonNode answer = JSON.readTree(body);
      uri = answer.path("uri").asText(null);
    } catch (IOException e) {
      uri = null;
    }
    if (uri == null) {
      refused(200, "unreadable access answer", Duration.ZERO);
      return;
    }
    drop();
    upgrade(uri);
  }

  private void upgradeAnswer() {
    ResponseHead head = ResponseHead.parse(in);
    if (head == null) {
      if (in.position() > MAX_HEAD) {
        refused(0, "upgrade answer too long", Duration.ZERO);
      }
      return;
    }
    if (head.status() != 101) {
      refused(head.status(), "upgrade answered " + head.status(), ReconnectPolicy.retryAfter(head.header("retry-after")));
      return;
    }
    if (!expectedAccept.equals(head.header("sec-websocket-accept"))) {
      refused(101, "wrong Sec-WebSocket-Accept", Duration.ZERO);
      return;
    }
    deadline.cancel();
    phase = Phase.OPEN;
    compact(head.length());
    messageOpcode = 0;
    messageLength = 0;
    policy.connected();
    lastInNanos = System.nanoTime();
    if (silenceMillis > 0) {
      silenceWatch = loop.every(Math.max(1, silenceMillis / 10), this::checkSilence);
    }
    listener.onOpen(attempts);
  }

  private void checkSilence() {
    if (phase == Phase.OPEN && System.nanoTime() - lastInNanos > silenceMillis * 1_000_000) {
      closed(1006, "nothing from the server for " + silenceMillis + " ms");
    }
  }

  /** Handles every whole frame in {@link #in}; keeps a partial one for the next read. */
  private void frames() {
    byte[] b = in.array();
    int at = 0;
    int end = in.position();
    while (phase == Phase.OPEN && end - at >= 2) {
      boolean fin = (b[at] & 0x80) != 0;
      int opcode = b[at] & 0x0F;
      boolean masked = (b[at + 1] & 0x80) != 0;
      int len7 = b[at + 1] & 0x7F;
      int headerLength = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + (masked ? 4 : 0);
      if (end - at < headerLength) {
        break;
      }
      long length = len7;
      if (len7 == 126) {
        length = ((b[at + 2] & 0xFF) << 8) | (b[at + 3] & 0xFF);
      } else if (len7 == 127) {
        length = 0;
        for (int i = 0; i < 8; i++) {
          length = (length << 8) | (b[at + 2 + i] & 0xFF);
        }
      }
      if (length > Integer.MAX_VALUE - headerLength) {
        closed(1009, "frame of " + length + " bytes");
        return;
      }
      if (end - at < headerLength + length) {
        break;
      }
      int payload = at + headerLength;
      if (masked) {
        for (int i = 0; i < length; i++) {
          b[payload + i] ^= b[payload - 4 + (i & 3)];
        }
      }
      frame(fin, opcode, b, payload, (int) length);
      at = payload + (int) length;
    }
    if (phase == Phase.OPEN) {
      compact(at);
    }
  }

  private void frame(boolean fin, int opcode, byte[] b, int from, int length) {
    switch (opcode) {
      case 0x0, 0x1, 0x2 -> {
        if (opcode != 0) {
          messageOpcode = opcode;
          messageLength = 0;
        }
        if (message.length < messageLength + length) {
          message = Arrays.copyOf(message, Math.max(message.length * 2, messageLength + length));
        }
        System.arraycopy(b, from, message, messageLength, length);
        messageLength += length;
        if (fin) {
          listener.onMessage(messageOpcode == 0x1, Arrays.copyOf(message, messageLength));
          messageOpcode = 0;
          messageLength = 0;
        }
      }
      case 0x9 -> write(ClientWire.masked(0xA, Arrays.copyOfRange(b, from, from + length)));
      case 0x8 -> {
        int code = length >= 2 ? ((b[from] & 0xFF) << 8) | (b[from + 1] & 0xFF) : 1005;
        String reason = length > 2 ? new String(b, from + 2, length - 2, StandardCharsets.UTF_8) : "";
        write(ClientWire.masked(0x8, length >= 2 ? ClientWire.closePayload(code) : new byte[0]));
        closed(code, reason);
      }
      default -> { } // pong, or an opcode the relay never sends
    }
  }

  private void write(ByteBuffer bytes) {
    out.add(bytes);
    try {
      flush();
    } catch (IOException e) {
      lost(String.valueOf(e.getMessage()));
    }
  }

  private void flush() throws IOException {
    if (channel == null || !channel.isConnected()) {
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

  private void compact(int consumed) {
    in.flip();
    in.position(consumed);
    in.compact();
  }

  /** An attempt failed: report it and try again when the policy says. */
  private void refused(int status, String detail, Duration serverAsked) {
    drop();
    listener.onRefused(status, detail);
    retryLater(serverAsked);
  }

  /** An open connection ended. */
  private void closed(int code, String reason) {
    drop();
    listener.onClose(code, reason);
    switch (ReconnectPolicy.afterClose(code)) {
      case STOP -> stopped = true;
      case NOW -> connect();
      case LATER -> retryLater(Duration.ZERO);
    }
  }

  private void retryLater(Duration serverAsked) {
    if (!stopped) {
      loop.schedule(policy.delayMillis(serverAsked), this::connect);
    }
  }

  /** Forgets the current socket, its deadline and anything unsent. */
  private void drop() {
    phase = Phase.IDLE;
    if (silenceWatch != null) {
      silenceWatch.cancel();
      silenceWatch = null;
    }
    if (deadline != null) {
      deadline.cancel();
      deadline = null;
    }
    out.clear();
    if (key != null) {
      key.cancel();
      key = null;
    }
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException ignored) {
        // the socket is being given up
      }
      channel = null;
    }
  }
}
