package io.relay.http.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client that started a request head must finish it within {@code relay.header-timeout} of
 * the node reading, or its connection is reset. The first head counts from the accept (on a TLS port the handshake is
 * inside it); a later one on an access connection from its first bytes, once {@link #headRead}
 * said the last request came whole, its body included. A relay connection's upgrade removes this
 * handler with its one head, as the access port does with a head whose body it refuses as too
 * large (the connection closes after that answer).
 */
public final class HeadTimeout extends ChannelInboundHandlerAdapter {
  /** The handler's name in a connection's pipeline. */
  public static final String NAME = "head-timeout";

  private final long timeoutNanos;
  private final PortCounters counters;
  private ScheduledFuture<?> timer;
  /** A head has been read, and the next bytes belong to its body or the next request. */
  private boolean betweenHeads;

  HeadTimeout(long timeoutNanos, PortCounters counters) {
    this.timeoutNanos = timeoutNanos;
    this.counters = counters;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    start(ctx);
    ctx.fireChannelActive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (timer == null && betweenHeads) {
      betweenHeads = false;
      start(ctx);
    }
    ctx.fireChannelRead(msg);
  }

  /** The head being read on {@code pipeline}'s connection has arrived whole: its clock stops until the next one starts. */
  public static void headRead(ChannelPipeline pipeline) {
    if (pipeline.get(NAME) instanceof HeadTimeout timeout) {
      timeout.cancel();
      timeout.betweenHeads = true;
    }
  }

  /** Whether {@code pipeline}'s connection has read nothing since its last head came whole (true without a head timeout). */
  public static boolean betweenRequests(ChannelPipeline pipeline) {
    return !(pipeline.get(NAME) instanceof HeadTimeout timeout) || timeout.betweenHeads && timeout.timer == null;
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    cancel();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    cancel();
    ctx.fireChannelInactive();
  }

  private void start(ChannelHandlerContext ctx) {
    timer = ctx.executor().schedule(() -> expire(ctx), timeoutNanos, TimeUnit.NANOSECONDS);
  }

  /** The head did not come whole in time: the connection is reset, and counted. */
  private void expire(ChannelHandlerContext ctx) {
    if (!ctx.channel().config().isAutoRead()) {
      start(ctx); // unless the node is not reading it (its answers wait for the client): its time runs again
      return;
    }
    counters.headerTimeouts.increment();
    ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
    ctx.close();
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }
}
