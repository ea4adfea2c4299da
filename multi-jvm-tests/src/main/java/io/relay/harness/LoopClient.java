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
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The harness's relay client: what {@link ReconnectingClient} does (POST the token for a one-time
 * code, connect to the URI it names, reconnect when {@link ReconnectPolicy} says), on non-blocking
 * sockets driven by a {@link SelectorLoop} ({@link LoopSocket}), so that thousands of participants
 * cost one thread and see a connection end as soon as the kernel reports it. HTTP/1.1 and the
 * client side of RFC 6455 are spoken directly: a fresh connection with {@code Connection: close}
 * for each code, the opening handshake with its {@code Sec-WebSocket-Accept} checked, masked
 * frames out, whole messages in ({@link ServerFrames}), pings answered, the server's close echoed.
 * Every method runs on the loop's thread; {@link #start} and {@link #close} hand themselves over.
 *
 * <p>Given a silence limit, an open connection from which nothing (no frame, not even a ping: the
 * relay pings a connection quiet either way for half its {@code RELAY_PING_INTERVAL}) has
 * arrived for that long is given up as dead (1006) and the client reconnects: what a client must
 * do to leave a node that is cut off from the network, whose connections end without a sound.
 */
final class LoopClient implements LoopSocket.Client, ServerFrames.Handler {
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
  private final ServerFrames frames = new ServerFrames();

  private volatile boolean stopped;
  private Phase phase = Phase.IDLE;
  private int attempts;
  /** The attempt's connection, or null between attempts. */
  private LoopSocket socket;
  private SelectorLoop.Timer deadline;
  private SelectorLoop.Timer silenceWatch;
  private long lastInNanos;
  private String expectedAccept;

  /**
   * @param relayBase where to connect (scheme, host, port) instead of where the code's URI points,
   *     for a client behind another ingress replica; null to follow the URI
   * @param silence how long an open connection may stay silent before it is given up; zero: forever
   */
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
    socket.write(ClientWire.masked(0x1, text.getBytes(StandardCharsets.UTF_8)));
    return phase == Phase.OPEN;
  }

  /** Stops for good: a normal close on an open connection, no reconnect. */
  void close() {
    stopped = true;
    loop.execute(
        () -> {
          if (phase == Phase.OPEN) {
            socket.write(ClientWire.masked(0x8, ClientWire.closePayload(1000)));
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
    deadline = loop.schedule(ATTEMPT_DEADLINE_MILLIS, () -> refused(0, "no answer within " + ATTEMPT_DEADLINE_MILLIS + " ms", Duration.ZERO));
    try {
      InetSocketAddress to = new InetSocketAddress(target.getHost(), target.getPort() > 0 ? target.getPort() : 80);
      socket = new LoopSocket(loop, to, ByteBuffer.wrap(request.getBytes(StandardCharsets.ISO_8859_1)), this);
    } catch (IOException | RuntimeException e) {
      refused(0, String.valueOf(e.getMessage()), Duration.ZERO);
    }
  }

  /** Acts on what has arrived: an answer's head (and body), or frames. */
  @Override
  public void onBytes() {
    lastInNanos = System.nanoTime();
    if (phase == Phase.CODE) {
      codeAnswer(false);
    } else if (phase == Phase.UPGRADE) {
      upgradeAnswer();
    }
    if (phase == Phase.OPEN) {
      ByteBuffer in = socket.in();
      int handled = frames.read(in.array(), in.position(), this);
      if (phase == Phase.OPEN) {
        socket.consumed(handled);
      }
    }
  }

  /** The server closed its side. */
  @Override
  public void onEnded() {
    if (phase == Phase.CODE) {
      codeAnswer(true);
    } else if (phase == Phase.OPEN) {
      closed(1006, "connection ended without a close frame");
    } else {
      refused(0, "connection ended before an answer", Duration.ZERO);
    }
  }

  /** The connection failed (reset, refused): no answer during an attempt, 1006 once open. */
  @Override
  public void onLost(String why) {
    if (phase == Phase.OPEN) {
      closed(1006, why);
    } else if (phase != Phase.IDLE) {
      refused(0, why, Duration.ZERO);
    }
  }

  private void codeAnswer(boolean atEnd) {
    ByteBuffer in = socket.in();
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
    ResponseHead head = ResponseHead.parse(socket.in());
    if (head == null) {
      if (socket.in().position() > MAX_HEAD) {
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
    socket.consumed(head.length());
    frames.reset();
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

  @Override
  public boolean onMessage(boolean text, byte[] message) {
    listener.onMessage(text, message);
    return phase == Phase.OPEN;
  }

  @Override
  public boolean onPing(byte[] payload) {
    socket.write(ClientWire.masked(0xA, payload));
    return phase == Phase.OPEN;
  }

  @Override
  public boolean onClose(int code, String reason) {
    socket.write(ClientWire.masked(0x8, code == 1005 ? new byte[0] : ClientWire.closePayload(code)));
    closed(code, reason);
    return false;
  }

  @Override
  public boolean onTooLong(long length) {
    closed(1009, "frame of " + length + " bytes");
    return false;
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
    if (socket != null) {
      socket.close();
      socket = null;
    }
  }
}
