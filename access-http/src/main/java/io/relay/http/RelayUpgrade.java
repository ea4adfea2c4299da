package io.relay.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.util.ReferenceCountUtil;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.HeadTimeout;
import io.relay.http.server.PortCounters;
import io.relay.http.server.Requests;
import io.relay.topic.ConnectionHandler;
import io.relay.ws.Handshake;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * {@code GET /session/{topic}?code=C} on a relay port, plain or TLS: the opening handshake
 * checked (RFC 6455 section 4.2.1), the client admitted ({@link Admission}), and only then the
 * {@code 101} written and the connection handed to its topic's {@link ConnectionHandler}. Every
 * refusal is a plain status with a one-line body before the upgrade, and closes the connection:
 * the port serves one request per connection. Other paths get 404, other methods 405.
 *
 * <p>The connection is not read while its code is redeemed. Bytes the client sent after its head
 * (frames in the same segment as the upgrade) are held and handed to the connection's handler
 * after the {@code 101}, before anything read later. Once admitted, the connection moves to its
 * topic's event loop (the same for every connection of the topic), so that a writer's frames are
 * written to its readers by the thread that read them, with no hand-over between threads.
 */
final class RelayUpgrade extends ChannelInboundHandlerAdapter {
  private static final String DECODER = "http-decoder";
  private static final String ENCODER = "http-encoder";
  private static final String NAME = "relay-upgrade";

  private final Admission admission;
  private final AdmissionGate gate;
  private final PortCounters counters;
  private final WarningLimiter warnings;
  /** The event loop of each topic's connections, or null to leave each on the loop it came to. */
  private final Function<String, EventLoop> homes;
  private boolean headRead;
  /** The request was refused: what the client sends from then on is discarded. */
  private boolean refused;
  /** Bytes that came after the head, held until the upgrade is answered. */
  private final List<ByteBuf> early = new ArrayList<>(1);

  private RelayUpgrade(
      Admission admission, AdmissionGate gate, PortCounters counters, WarningLimiter warnings, Function<String, EventLoop> homes) {
    this.admission = admission;
    this.homes = homes;
    this.gate = gate;
    this.counters = counters;
    this.warnings = warnings;
  }

  /**
   * Sets up a new relay port connection's pipeline, after its TLS and head timeout.
   *
   * @param homes the event loop of each topic's connections, or null to leave each connection on
   *     the loop it was accepted on
   */
  static void install(
      ChannelPipeline pipeline,
      Admission admission,
      AdmissionGate gate,
      PortCounters counters,
      WarningLimiter warnings,
      Function<String, EventLoop> homes) {
    HttpRequestDecoder decoder = new HttpRequestDecoder(Requests.DECODER);
    // one head, and the bytes after it are left undecoded
    decoder.setSingleDecode(true);
    pipeline.addLast(DECODER, decoder);
    pipeline.addLast(ENCODER, new HttpResponseEncoder());
    pipeline.addLast(NAME, new RelayUpgrade(admission, gate, counters, warnings, homes));
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (msg instanceof HttpRequest request && !headRead && ctx.channel().isActive()) { // not a head cut off by the close
      headRead = true;
      ctx.channel().config().setAutoRead(false);
      // a relay connection's one head has come (its admission has timeouts of its own); the bytes after it are early frames
      ctx.pipeline().remove(HeadTimeout.NAME);
      ctx.pipeline().remove(DECODER);
      onHead(ctx, request);
    } else if (msg instanceof ByteBuf bytes && headRead && !refused && ctx.channel().isActive()) {
      early.add(bytes);
    } else {
      ReferenceCountUtil.release(msg);
    }
  }

  /** A failure before the upgrade (plain text to a TLS port, a reset): closed without a log line, whose text could quote the request. */
  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }

  private void onHead(ChannelHandlerContext ctx, HttpRequest request) {
    HttpHeaders headers = request.headers();
    QueryStringDecoder target = new QueryStringDecoder(request.uri());
    String key = header(headers, "Sec-WebSocket-Key");
    String topic;
    try {
      topic = admissible(request, target, key);
    } catch (ApiException e) {
      refuse(ctx, admission.refusal(e));
      return;
    }
    List<String> codes = target.parameters().get("code");
    String code = codes == null ? null : codes.get(0);
    // an entry of the comma-separated list, compared exactly
    String protocol = headers.containsValue("Sec-WebSocket-Protocol", Handshake.NULL_PROTOCOL, false) ? Handshake.NULL_PROTOCOL : null;
    String userAgent = header(headers, "User-Agent");
    admission
        .admit(topic, code, userAgent == null ? "" : userAgent, remoteAddress(headers, (InetSocketAddress) ctx.channel().remoteAddress()))
        .whenComplete(
            (handler, failure) -> {
              gate.leave();
              ctx.executor().execute(() -> answer(ctx, topic, key, protocol, handler, failure));
            });
  }

  /** The topic of an upgrade that goes on to its admission, a place at the gate taken for it; else its refusal. */
  private String admissible(HttpRequest request, QueryStringDecoder target, String key) {
    Requests.countFields(request);
    Requests.Refusal malformed = Requests.refusal(request, counters, warnings);
    if (malformed != null) {
      throw new ApiException(malformed.status(), malformed.reason());
    }
    try {
      target.parameters();
    } catch (IllegalArgumentException e) {
      throw new ApiException(400, "malformed request target");
    }
    String path = target.rawPath();
    if (!SessionRoutes.isSessionPath(path)) {
      throw new ApiException(404, "The requested resource could not be found.");
    }
    if (!request.method().name().equals("GET")) {
      throw new ApiException(405, "HTTP method not allowed, supported methods: GET");
    }
    String topic = admission.topic(path.substring(SessionRoutes.PREFIX.length()));
    HttpHeaders headers = request.headers();
    Handshake.Problem problem =
        Handshake.check(header(headers, "Upgrade"), header(headers, "Connection"), key, header(headers, "Sec-WebSocket-Version"));
    if (problem == Handshake.Problem.VERSION) {
      throw new ApiException(426, "unsupported WebSocket version; this server speaks " + Handshake.VERSION);
    }
    if (problem != null
        || !request.protocolVersion().equals(HttpVersion.HTTP_1_1)
        || headers.getAll("Host").size() != 1
        || HttpUtil.isContentLengthSet(request) && !headers.getAll(HttpHeaderNames.CONTENT_LENGTH).equals(List.of("0")) // 0: Java 17.0.15's client
        || HttpUtil.isTransferEncodingChunked(request)) {
      throw new ApiException(400, "expected a WebSocket upgrade");
    }
    if (!gate.tryEnter()) {
      throw new ApiException(503, "the node is admitting as many clients as it can; retry");
    }
    return topic;
  }

  /**
   * Answers the upgrade on the connection's event loop once the admission is decided. An admitted
   * connection first moves to its topic's event loop, if it is not on it.
   */
  private void answer(
      ChannelHandlerContext ctx, String topic, String key, String protocol, ConnectionHandler handler, Throwable failure) {
    if (failure != null) {
      refuse(ctx, admission.refusal(failure));
      return;
    }
    Channel channel = ctx.channel();
    EventLoop home = homes == null ? null : homes.apply(topic);
    if (home == null || home == channel.eventLoop() || !channel.isActive()) {
      switchProtocol(ctx, key, protocol, handler);
      return;
    }
    channel
        .deregister()
        .addListener(
            (ChannelFutureListener)
                deregistered ->
                    (deregistered.isSuccess() ? home.register(channel) : deregistered)
                        .addListener(
                            moved -> {
                              if (moved.isSuccess()) {
                                switchProtocol(ctx, key, protocol, handler);
                              } else { // closed meanwhile, or the loop stopped: its topic drops it now
                                releaseEarly();
                                handler.abandon();
                                channel.close();
                              }
                            }));
  }

  /** Writes the {@code 101} and hands the connection, and what it sent after its head, to its handler. */
  private void switchProtocol(ChannelHandlerContext ctx, String key, String protocol, ConnectionHandler handler) {
    if (!ctx.channel().isActive()) {
      releaseEarly();
      handler.abandon();
      return;
    }
    ChannelPipeline pipeline = ctx.pipeline();
    pipeline.remove(ENCODER);
    ctx.write(Unpooled.wrappedBuffer(Handshake.switching(key, protocol)));
    pipeline.addAfter(NAME, "websocket", handler);
    for (ByteBuf bytes : early) {
      ctx.fireChannelRead(bytes);
    }
    early.clear();
    ctx.fireChannelReadComplete();
    pipeline.remove(this);
    ctx.flush();
    ctx.channel().config().setAutoRead(true);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseEarly();
  }

  private void releaseEarly() {
    early.forEach(ByteBuf::release);
    early.clear();
  }

  private void refuse(ChannelHandlerContext ctx, Admission.Refusal refusal) {
    refused = true;
    releaseEarly();
    byte[] line = (refusal.line() + "\n").getBytes(StandardCharsets.UTF_8);
    Requests.answerAndClose(ctx, Requests.response(refusal.status(), refusal.headers(), "text/plain; charset=UTF-8", line));
  }

  /** Every value of the field {@code name}, joined with commas, or null if it has none. */
  private static String header(HttpHeaders headers, String name) {
    List<String> values = headers.getAll(name);
    return values.isEmpty() ? null : values.size() == 1 ? values.get(0) : String.join(", ", values);
  }

  /** The first X-Forwarded-For entry, else (none, or an empty one) the peer's address. */
  private static String remoteAddress(HttpHeaders headers, InetSocketAddress peer) {
    String forwarded = headers.get("X-Forwarded-For");
    String first = forwarded == null ? "" : forwarded.split(",", 2)[0].trim(); // the limit keeps "," from splitting into nothing
    return !first.isEmpty() ? first : peer == null || peer.getAddress() == null ? "unknown" : peer.getAddress().getHostAddress();
  }
}
