package io.relay.http;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.ClientPorts;
import io.relay.http.server.HeadTimeout;
import io.relay.http.server.PortCounters;
import io.relay.http.server.Requests;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpProtocols;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;

/**
 * The access API on an access port, plain or TLS: Netty reads each request (head and body, at most
 * {@value #MAX_BODY_BYTES} bytes of body) and the API's sealed Pekko HTTP route answers it in
 * process, with no HTTP stream per connection. Requests on one connection are answered in order,
 * one at a time (at most {@value #MAX_PIPELINED} read ahead), and neither answered nor read while
 * the client does not take its answers; the connection is kept alive as
 * HTTP/1.1 and the client's {@code Connection} header say, and closed after {@code relay.idle-timeout}
 * in which nothing moved either way, or once the node stops accepting (after the answer to a request being
 * answered or begun, which says {@code Connection: close}). A head the port cannot read gets a JSON error
 * ({@link Requests}) and the connection closes.
 */
final class AccessRequests extends ChannelInboundHandlerAdapter {
  /** The largest request body the access API reads; its requests carry none or a little JSON. */
  static final int MAX_BODY_BYTES = 64 * 1024;

  /** Requests read ahead of the one being answered (HTTP/1.1 pipelining), at most. */
  static final int MAX_PIPELINED = 16;

  private final Function<HttpRequest, CompletionStage<HttpResponse>> route;
  /** Code requests, answered without the route tree. */
  private final CodeRequests codes;
  private final Cors cors;
  private final Materializer materializer;
  private final PortCounters counters;
  private final WarningLimiter errors;
  private final ArrayDeque<FullHttpRequest> waiting = new ArrayDeque<>(1);
  private boolean answering;
  /** The request being answered is HTTP/1.0. */
  private boolean http10;
  private boolean closing;
  private boolean unbound; // the ports stopped accepting: the answer being worked on is the last
  /** The refusal of a request read ahead (a body over the limit), answered after those before it; then the connection closes. */
  private FullHttpResponse refusal;

  private AccessRequests(
      Function<HttpRequest, CompletionStage<HttpResponse>> route,
      CodeRequests codes,
      Cors cors,
      Materializer materializer,
      PortCounters counters,
      WarningLimiter errors) {
    this.route = route;
    this.codes = codes;
    this.cors = cors;
    this.materializer = materializer;
    this.counters = counters;
    this.errors = errors;
  }

  /**
   * Sets up a new access port connection's pipeline, after its TLS and head timeout.
   *
   * @param route the access API's sealed route
   * @param codes code requests answered without the route tree, or null for none
   */
  static void install(
      ChannelPipeline pipeline,
      Function<HttpRequest, CompletionStage<HttpResponse>> route,
      CodeRequests codes,
      Cors cors,
      Materializer materializer,
      Duration idleTimeout,
      PortCounters counters,
      WarningLimiter errors) {
    // the codec and the aggregator ask for more bytes themselves while a request is unfinished:
    // not while reading is paused (autoRead off), or a client that reads no answers would be read on
    pipeline.addLast(
        "read-gate",
        new ChannelOutboundHandlerAdapter() {
          @Override
          public void read(ChannelHandlerContext ctx) {
            if (ctx.channel().config().isAutoRead()) {
              ctx.read();
            }
          }
        });
    pipeline.addLast("http-codec", new HttpServerCodec(Requests.DECODER)); // its encoder sends no body to a HEAD
    // gathers a request's body, refusing one over the limit with a JSON 413, and the connection
    // closes; a client that sent Expect: 100-continue gets the same answer before its body
    pipeline.addLast(
        "http-body",
        new HttpObjectAggregator(MAX_BODY_BYTES) {
          @Override
          protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            Requests.Refusal head = Requests.refusal((io.netty.handler.codec.http.HttpRequest) oversized, counters, errors); // refused for itself: its own answer
            if (head == null) {
              counters.oversizedBodies.increment();
            }
            if (ctx.pipeline().get(HeadTimeout.NAME) != null) {
              ctx.pipeline().remove(HeadTimeout.NAME); // its head came whole, and the connection reads no other: no clock
            }
            ctx.pipeline().remove(this); // nor aggregates another: what follows reaches the handler unread (channelRead drops it)
            AccessRequests handler = ctx.pipeline().get(AccessRequests.class);
            String origin = oversized.headers().get(HttpHeaderNames.ORIGIN);
            handler.refuseInTurn(ctx, head == null ? handler.error(413, "request body larger than " + MAX_BODY_BYTES + " bytes", origin) : handler.error(head.status(), head.reason(), origin));
          }

          @Override
          protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
            Requests.countFields(start); // the first look at each head: its fields as sent
            if (start.decoderResult().isFailure() || unsupportedExpectation(start)) {
              return null; // refused (serve): a failed head at once, a JSON 417 once read whole, not Netty's bare one
            }
            if (HttpUtil.is100ContinueExpected(start) && HttpUtil.getContentLength(start, -1L) > maxContentLength) {
              start.headers().remove(HttpHeaderNames.EXPECT);
              return null; // refused as any body over the limit is (above), not with Netty's bare 413
            }
            return super.newContinueResponse(start, maxContentLength, pipeline);
          }
        });
    pipeline.addLast("idle", new IdleStateHandler(true, 0, 0, idleTimeout.toNanos(), TimeUnit.NANOSECONDS));
    pipeline.addLast("access-api", new AccessRequests(route, codes, cors, materializer, counters, errors));
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest request) || closing || refusal != null || !ctx.channel().isActive()) { // or a head cut off by the close
      ReferenceCountUtil.release(msg);
      return;
    }
    HeadTimeout.headRead(ctx.pipeline());
    if (answering) {
      if (waiting.size() >= MAX_PIPELINED) {
        request.release();
        counters.pipelineOverflows.increment();
        closing = true;
        ctx.close();
        return;
      }
      waiting.addLast(request);
      ctx.channel().config().setAutoRead(false);
      return;
    }
    serve(ctx, request);
  }

  private void serve(ChannelHandlerContext ctx, FullHttpRequest request) {
    answering = true;
    boolean keepAlive;
    CompletionStage<FullHttpResponse> answer;
    String origin = request.headers().get(HttpHeaderNames.ORIGIN);
    try {
      Requests.Refusal refused = Requests.refusal(request, counters, errors);
      if (refused == null && unsupportedExpectation(request)) {
        refused = new Requests.Refusal(417, "the only expectation understood is 100-continue");
      }
      if (refused != null) {
        closing = true;
        Requests.answerAndClose(ctx, error(refused.status(), refused.reason(), origin));
        return;
      }
      keepAlive = HttpUtil.isKeepAlive(request);
      http10 = !request.protocolVersion().isKeepAliveDefault();
      answer = answer(request, origin);
    } finally {
      request.release();
    }
    answer.whenCompleteAsync(
        (response, failure) -> {
          if (failure != null) {
            errors.error("answering an access API request failed", failure);
          }
          respond(ctx, failure == null ? response : error(500, "There was an internal server error.", origin), keepAlive);
        },
        ctx.executor());
  }

  /** The route's answer to {@code request} from {@code origin} (a code request's: {@link CodeRequests}'), as Netty writes it. */
  private CompletionStage<FullHttpResponse> answer(FullHttpRequest request, String origin) {
    try {
      CompletionStage<HttpResponse> code = codes == null ? null : codes.answer(request);
      if (code != null) {
        return code.thenCompose(this::toNetty);
      }
      Optional<HttpMethod> method = HttpMethods.lookup(request.method().name());
      if (method.isEmpty()) {
        return CompletableFuture.completedFuture(error(501, "HTTP method not implemented", origin));
      }
      HttpRequest pekko;
      try {
        pekko = toPekko(request, method.get());
      } catch (RuntimeException e) {
        return CompletableFuture.completedFuture(error(400, "malformed request", origin));
      }
      return route.apply(pekko).thenComposeAsync(this::toNetty, Runnable::run);
    } catch (Exception e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private static HttpRequest toPekko(FullHttpRequest request, HttpMethod method) {
    List<HttpHeader> headers = new ArrayList<>(request.headers().size());
    String contentType = null;
    for (Map.Entry<String, String> field : request.headers()) {
      String name = field.getKey();
      if (name.equalsIgnoreCase("Content-Type")) {
        contentType = field.getValue();
      } else if (!name.equalsIgnoreCase("Content-Length") && !name.equalsIgnoreCase("Transfer-Encoding")) {
        headers.add(RawHeader.create(name, field.getValue()));
      }
    }
    byte[] body = ByteBufUtil.getBytes(request.content());
    HttpRequest pekko =
        HttpRequest.create()
            .withMethod(method)
            .withUri(Uri.create(request.uri()))
            .withProtocol(request.protocolVersion().minorVersion() == 0 ? HttpProtocols.HTTP_1_0 : HttpProtocols.HTTP_1_1)
            .addHeaders(headers);
    if (body.length == 0 && contentType == null) {
      return pekko;
    }
    return pekko.withEntity(
        HttpEntities.create(contentType == null ? ContentTypes.APPLICATION_OCTET_STREAM : ContentTypes.parse(contentType), body));
  }

  /**
   * {@code response} as Netty writes it: a strict entity (every answer but the pages) at once. Pekko's
   * Scala {@code CompletionStage}s get no plain callback, which on two or fewer cores starts a thread
   * (see {@link io.relay.Ask}), but one on the thread that completes them, as {@link AdmissionGate} does.
   */
  private CompletionStage<FullHttpResponse> toNetty(HttpResponse response) {
    if (response.entity() instanceof HttpEntity.Strict strict) {
      return CompletableFuture.completedFuture(toNetty(response, strict));
    }
    return response.entity().toStrict(10_000, materializer).thenApplyAsync(strict -> toNetty(response, strict), Runnable::run);
  }

  private static FullHttpResponse toNetty(HttpResponse response, HttpEntity.Strict entity) {
    FullHttpResponse netty = Requests.response(response.status().intValue(), Map.of(), entity.getContentType().toString(), entity.getData().toArray());
    response.getHeaders().forEach(header -> netty.headers().add(header.name(), header.value()));
    if (entity.getContentType().equals(ContentTypes.NO_CONTENT_TYPE)) {
      netty.headers().remove("Content-Type");
    }
    return netty;
  }

  private void respond(ChannelHandlerContext ctx, FullHttpResponse response, boolean keepAlive) {
    if (closing || !ctx.channel().isActive()) {
      response.release();
      return;
    }
    if (!keepAlive || unbound) {
      closing = true;
      Requests.answerAndClose(ctx, response);
      return;
    }
    if (http10) {
      // an HTTP/1.0 client asked to keep the connection: say it is kept
      response.headers().set("Connection", "keep-alive");
    }
    ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE_ON_FAILURE);
    answering = false;
    next(ctx);
  }

  /**
   * Goes on with what waits: the next request read ahead, a refusal, or reading. A client that
   * does not read its answers gets no more of them, and is not read from, until it does.
   */
  private void next(ChannelHandlerContext ctx) {
    if (!ctx.channel().isWritable()) {
      ctx.channel().config().setAutoRead(false);
      return;
    }
    FullHttpRequest next = waiting.pollFirst();
    if (next != null) {
      serve(ctx, next);
    } else if (refusal != null) {
      FullHttpResponse last = refusal;
      refusal = null;
      refuseInTurn(ctx, last);
    } else {
      ctx.channel().config().setAutoRead(true);
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (ctx.channel().isWritable() && !answering && !closing) {
      next(ctx);
    }
    ctx.fireChannelWritabilityChanged();
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    // not while the route works; an answer not all written (fewer bytes before unwritable than the high-water mark) gets
    // the next event, which comes only if none of it went out
    if (event instanceof IdleStateEvent idle && (!answering || closing)
        && (!idle.isFirst() || ctx.channel().bytesBeforeUnwritable() >= ctx.channel().config().getWriteBufferHighWaterMark())) {
      counters.idleTimeouts.increment();
      closing = true;
      ctx.close();
    } else if (event == ClientPorts.UNBOUND) { // a kept connection is not kept: its client goes to another node
      unbound = true;
      if (!answering && !closing && waiting.isEmpty() && refusal == null && HeadTimeout.betweenRequests(ctx.pipeline())) {
        closing = true;
        ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE); // after the answers written
      }
    } else {
      ctx.fireUserEventTriggered(event);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    closing = true;
    ctx.close();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    waiting.forEach(FullHttpRequest::release);
    waiting.clear();
    ReferenceCountUtil.release(refusal);
    refusal = null;
  }

  /** Answers {@code response} and closes: now, or once the requests read before it are answered. */
  private void refuseInTurn(ChannelHandlerContext ctx, FullHttpResponse response) {
    if (answering) {
      refusal = response;
      ctx.channel().config().setAutoRead(false);
    } else {
      closing = true;
      Requests.answerAndClose(ctx, response);
    }
  }

  /** Whether {@code message} expects something other than {@code 100-continue}, the one expectation there is. */
  private static boolean unsupportedExpectation(HttpMessage message) {
    String expect = message.headers().get(HttpHeaderNames.EXPECT);
    return expect != null && !HttpHeaderValues.CONTINUE.contentEqualsIgnoreCase(expect);
  }

  /** An answer of the port's own: a JSON error, with the CORS headers the route gives its answers to {@code origin}. */
  private FullHttpResponse error(int status, String message, String origin) {
    HttpResponse answer = cors.mark(Json.error(status, message), Optional.ofNullable(origin));
    return toNetty(answer, (HttpEntity.Strict) answer.entity());
  }
}
