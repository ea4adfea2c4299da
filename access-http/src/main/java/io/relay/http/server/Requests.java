package io.relay.http.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.relay.http.log.WarningLimiter;
import io.relay.ws.OutputEnd;
import java.util.Date;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The request heads the client ports take, and how they refuse the rest. Netty's HTTP/1.1
 * decoder reads each head ({@link #DECODER}); on top of its grammar and limits the ports hold a
 * head to these: a head over {@link #MAX_HEAD_BYTES} is refused with 431 (414 when its request
 * line alone is that long), a target over {@link #MAX_TARGET_BYTES} with 414, more than {@link
 * #MAX_FIELDS} fields ({@link #countFields}) or a field value over {@link #MAX_FIELD_BYTES} with 431, a version other than HTTP/1.x with 505, and anything the decoder
 * could not read with 400.
 */
public final class Requests {
  public static final int MAX_HEAD_BYTES = 16 * 1024;
  public static final int MAX_TARGET_BYTES = 2048;
  public static final int MAX_FIELDS = 64;
  public static final int MAX_FIELD_BYTES = 8 * 1024;
  private static final TooLongHttpHeaderException TOO_MANY_FIELDS = new TooLongHttpHeaderException("too many header fields");
  /** How long a refused connection is read on after its answer before it is closed. */
  public static final long LINGER_MS = 1000;

  /** How the ports' decoders read heads: strict lines, validated fields, the limits above. */
  public static final HttpDecoderConfig DECODER =
      new HttpDecoderConfig()
          .setMaxInitialLineLength(MAX_HEAD_BYTES)
          .setMaxHeaderSize(MAX_HEAD_BYTES)
          .setValidateHeaders(true)
          .setStrictLineParsing(true)
          .setUseRfc9112TransferEncoding(true);

  private Requests() {}

  /** Marks a head the decoder read refused if it has over {@link #MAX_FIELDS} fields; on the head as sent, before aggregating a body adds or drops any. */
  public static void countFields(HttpMessage head) {
    if (head.decoderResult().isSuccess() && head.headers().size() > MAX_FIELDS) {
      head.setDecoderResult(DecoderResult.failure(TOO_MANY_FIELDS));
    }
  }

  /** Why a head is refused: the status and a one-line reason. */
  public record Refusal(int status, String reason) {}

  /**
   * Why {@code request} (its fields counted: {@link #countFields}) is refused, or null if a port
   * serves its head. A refused head is counted and logged by its status alone, rate-limited: it may
   * hold a one-time code or a token.
   */
  public static Refusal refusal(HttpRequest request, PortCounters counters, WarningLimiter warnings) {
    Refusal refusal = why(request);
    if (refusal != null) {
      counters.malformedHeads.increment();
      warnings.warn("refused a request that could not be parsed: {}", refusal.status());
    }
    return refusal;
  }

  private static Refusal why(HttpRequest request) {
    DecoderResult result = request.decoderResult();
    if (result.isFailure()) {
      Throwable cause = result.cause();
      if (cause instanceof TooLongHttpLineException) {
        return new Refusal(414, "request target too long");
      }
      if (cause instanceof TooLongHttpHeaderException) {
        return new Refusal(431, cause == TOO_MANY_FIELDS ? cause.getMessage() : "request head too large");
      }
      return new Refusal(400, "malformed request head");
    }
    if (request.uri().length() > MAX_TARGET_BYTES) {
      return new Refusal(414, "request target too long");
    }
    if (request.protocolVersion().majorVersion() != 1) {
      return new Refusal(505, "HTTP version not supported");
    }
    if (!isOriginForm(request.uri())) {
      return new Refusal(400, "malformed request target");
    }
    for (Map.Entry<String, String> field : request.headers()) {
      if (field.getValue().length() > MAX_FIELD_BYTES) {
        return new Refusal(431, "header field too large");
      }
    }
    return null;
  }

  /**
   * Whether {@code target} is in origin form ({@code /path?query}, RFC 9112 section 3.2.1): RFC
   * 3986's characters only, and each {@code %} followed by two hex digits.
   */
  static boolean isOriginForm(String target) {
    if (!target.startsWith("/")) {
      return false;
    }
    for (int i = 0; i < target.length(); i++) {
      char c = target.charAt(i);
      boolean allowed =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~:/?[]@!$&'()*+,;=%".indexOf(c) >= 0;
      // a non-ASCII digit Character.digit would take is refused at its own index
      if (!allowed || c == '%' && (i + 2 >= target.length() || Character.digit(target.charAt(i + 1), 16) < 0 || Character.digit(target.charAt(i + 2), 16) < 0)) {
        return false;
      }
    }
    return true;
  }

  /**
   * A response with {@code body} of {@code contentType}, and a {@code Date}. Field names are
   * written as RFC 9110 spells them, for clients that match them exactly.
   */
  public static FullHttpResponse response(int status, Map<String, String> headers, String contentType, byte[] body) {
    FullHttpResponse response =
        new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status), Unpooled.wrappedBuffer(body));
    response.headers().set("Date", DateFormatter.format(new Date()));
    response.headers().set("Content-Type", contentType);
    response.headers().setInt("Content-Length", body.length);
    headers.forEach(response.headers()::set);
    return response;
  }

  /**
   * Writes {@code response} with {@code Connection: close}, then ends the server's side of the
   * connection ({@link OutputEnd}) and reads on, discarding, until the client closes its side or
   * {@link #LINGER_MS} pass: a client still sending (the rest of an over-long head, a body) would
   * otherwise get a reset that can destroy the response before it reads it. The caller's handler
   * discards what it reads from then on.
   */
  public static void answerAndClose(ChannelHandlerContext ctx, FullHttpResponse response) {
    response.headers().set("Connection", "close");
    Channel channel = ctx.channel();
    ctx.writeAndFlush(response)
        .addListener(
            (ChannelFutureListener)
                written -> {
                  if (!written.isSuccess()) {
                    channel.close();
                    return;
                  }
                  OutputEnd.after(channel);
                  channel.config().setAutoRead(true);
                  channel.eventLoop().schedule(() -> channel.close(), LINGER_MS, TimeUnit.MILLISECONDS);
                });
  }
}
