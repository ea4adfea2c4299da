package io.relay.topic;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.util.concurrent.AbstractScheduledEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import io.relay.RelaySettings;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.ws.CloseCodes;
import io.relay.ws.CloseFrame;
import io.relay.ws.CloseHandshake;
import io.relay.ws.InboundProtocol;
import io.relay.ws.OutputEnd;
import io.relay.ws.WsFrames.Frame;
import io.relay.ws.WsFrames;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.util.ByteString;

/**
 * One connection's WebSocket protocol on its channel, after the upgrade: the glue between the
 * channel, the protocol core of the {@code ws} package and the topic. The client's bytes go to
 * its {@link InboundProtocol}, each message it assembles, rendered once into a pooled buffer, to
 * the topic's {@link Room}; pongs, the connection's outbound queue, pings and close frames go
 * back; the {@link CloseHandshake} decides when the connection ends. The connection counts what
 * it holds in the node's {@link MemoryBudget}, and lets go of it when the budget sheds it.
 *
 * <p>Everything here runs on the channel's event loop, and only that thread writes the channel:
 * writers on other event loops queue frames in the connection's {@link
 * io.relay.topic.OutboundQueue}, whose wake-up asks this loop to drain it. The queue is drained while
 * the channel is writable (its outbound buffer under the high-water mark); past it, frames wait
 * in the queue, where drop-oldest bounds them, until the channel drains below the low-water mark.
 * A client's pings are answered at once while the channel is writable; otherwise only the newest
 * ping's pong waits (RFC 6455 section 5.5.3 allows answering only the most recent). A client
 * that sends nothing, not even a pong, for {@code relay.idle-timeout} is cut off.
 */
public final class ConnectionHandler extends ChannelInboundHandlerAdapter
    implements InboundProtocol.Listener, MemoryBudget.Holder {
  private static final Frame PING = WsFrames.frame(WsFrames.PING, ByteString.emptyByteString());
  private static final String SHED_REASON = "shed to keep the node within its memory budget";

  private final Connection connection;
  private final RelaySettings settings;
  private final RelayMetrics metrics;
  private final MemoryBudget budget;
  private final InboundProtocol inbound;
  private final CloseHandshake handshake = new CloseHandshake();
  private final Runnable drainTask = this::drain;
  private ChannelHandlerContext ctx;
  private Channel channel;
  /** The newest pong that waits for the channel to be writable, or null. */
  private Frame pendingPong;
  /** Frames written since the last flush. */
  private boolean unflushed;
  /** The server's close frame went out. */
  private boolean closeSent;
  /** The server's last frame went out: nothing more is written. */
  private boolean outputEnded;
  private boolean ended;
  private String endReason = "disconnected";
  /** The channel's event loop's clock (a test's embedded loop has one it moves itself). */
  private Ticker clock = Ticker.systemTicker();
  private long lastOutNanos;
  /** When the client last sent anything: a live client answers every ping. */
  private long lastInNanos;
  private ScheduledFuture<?> pingTimer;
  private ScheduledFuture<?> closeTimer;
  private ScheduledFuture<?> flushTimer;

  ConnectionHandler(Connection connection, RelaySettings settings, RelayMetrics metrics, MemoryBudget budget) {
    this.connection = connection;
    this.settings = settings;
    this.metrics = metrics;
    this.budget = budget;
    boolean keepMessages = connection.grant().canWrite() || connection.room().takesMessagesWithoutWrite();
    this.inbound = new InboundProtocol(this, keepMessages, settings.maxMessageBytes(), budget);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.channel = ctx.channel();
    if (ctx.executor() instanceof AbstractScheduledEventExecutor loop) {
      clock = loop.ticker();
    }
    lastOutNanos = clock.nanoTime();
    lastInNanos = lastOutNanos;
    budget.register(this);
    connection.attached();
    long ping = settings.pingInterval().toNanos();
    pingTimer = ctx.executor().scheduleWithFixedDelay(this::onPingTimer, ping, ping, TimeUnit.NANOSECONDS);
    boolean member = connection.outbound().attach(() -> ctx.executor().execute(drainTask));
    if (!channel.isActive()) {
      end();
    } else if (!member) {
      droppedByTopic();
    }
  }

  /**
   * The topic dropped this connection before it attached (its upgrade took longer than
   * {@code relay.attach-timeout}), or as it did: it is no member, so it neither relays nor
   * receives; it ends at once, before anything it sent is read, and the client reconnects.
   */
  private void droppedByTopic() {
    endReason = "dropped by its topic: the upgrade took longer than the attach timeout";
    end();
    cutOff();
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    end();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    end();
  }

  /**
   * The client left while its code was redeemed, before this handler was added to its channel:
   * its topic drops it now, not at the attach deadline, and it takes no frames meanwhile.
   */
  public void abandon() {
    endReason = "the client left before its upgrade was answered";
    end();
  }

  /** The connection ended: lets go of everything and tells the topic, once. */
  private void end() {
    if (ended) {
      return;
    }
    ended = true;
    cancel(pingTimer);
    cancel(closeTimer);
    cancel(flushTimer);
    budget.unregister(this);
    connection.outbound().dispose();
    inbound.release();
    int code = connection.closeCode();
    String reason = code != 0 ? "closed by server with " + code : endReason;
    if (connection.topicActor() != null) {
      connection.topicActor().tell(new TopicActor.Left(connection.id(), reason));
    }
  }

  private static void cancel(ScheduledFuture<?> timer) {
    if (timer != null) {
      timer.cancel(false);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    endReason = "connection failed: " + cause.getClass().getSimpleName();
    ctx.close();
  }

  // ---- client to server

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf bytes = (ByteBuf) msg;
    lastInNanos = clock.nanoTime();
    try {
      if (!ended) {
        inbound.read(bytes);
      }
    } finally {
      bytes.release();
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    flushIfWritten();
  }

  @Override
  public void onMessage(byte opcode, byte[] bytes, int start, int size) {
    received(size);
    if (bytes != null) {
      relay(WsFrames.message(ctx.alloc(), opcode, bytes, start, size));
    } else if (!connection.grant().canWrite()) {
      connection.stats().refused();
      metrics.framesRefused.inc();
    } else {
      metrics.writerFramesDiscarded.inc(); // sent once the server began closing it
    }
  }

  @Override
  public void onFrame(Frame frame) {
    try {
      received(frame.payloadLength());
      connection.room().fanOut(connection, frame);
    } finally {
      frame.release();
    }
  }

  private void received(int size) {
    metrics.framesIn.inc();
    metrics.bytesIn.inc(size);
    connection.stats().received(size, System.nanoTime());
  }

  /** Offers a message this handler made to the topic's readers, then lets go of it as its maker. */
  private void relay(Frame frame) {
    try {
      connection.room().fanOut(connection, frame);
    } finally {
      frame.release();
    }
  }

  @Override
  public void onPing(byte[] payload) {
    if (outputEnded) {
      return; // the client's close was answered (it sent one: no pong is owed) or the server failed it
    }
    Frame pong = WsFrames.frame(WsFrames.PONG, ByteString.fromArrayUnsafe(payload));
    if (channel.isWritable()) {
      write(pong);
    } else {
      pendingPong = pong;
    }
  }

  @Override
  public void onClose(CloseFrame close) {
    endReason = "closed by client with " + close.code();
    Frame answer = handshake.onPeerClose(close);
    if (answer == null) {
      flushIfWritten();
      ctx.close();
    } else {
      writeLast(answer);
      connection.outbound().disposeAnsweringClient(); // nothing more goes out: what is queued, and what comes, is a close's to let go
    }
  }

  @Override
  public void onViolation(int closeCode, String reason) {
    if (closeCode == CloseCodes.TRY_AGAIN_LATER && !budget.isShedding(this)) {
      metrics.connectionsShed.inc(); // a message the budget had no room for; one it shed is counted by it
    }
    if (handshake.onFailure()) {
      connection.outbound().stopFlushing(); // a move's or a drain's close goes next, without what is queued
      connection.close(closeCode, reason);
    } else {
      ctx.close();
    }
  }

  // ---- server to client

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    if (channel.isWritable()) {
      if (pendingPong != null && !outputEnded) {
        write(pendingPong);
        pendingPong = null;
      }
      drain();
    }
    ctx.fireChannelWritabilityChanged();
  }

  /** Writes what the outbound queue holds while the channel is writable; then flushes. */
  private void drain() {
    if (outputEnded || ended) {
      return;
    }
    if (!flushTimerStarted() && connection.outbound().isClosing()) {
      // the server closes the connection (a deny, an expiry, a drain, a move): nothing it sends
      // from now on is relayed, even while a full channel keeps the close frame waiting
      inbound.discardMessages();
      // a graceful close: what is queued has the close timeout to go out
      flushTimer = ctx.executor().schedule(this::onFlushTimeout, settings.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }
    long now = System.nanoTime();
    while (channel.isWritable()) {
      Frame next = connection.outbound().poll();
      if (next == null) {
        if (connection.outbound().isDisposed()) {
          droppedByTopic(); // a disposed queue is empty: asked only when it is found so, not per wake-up
          return;
        }
        break;
      }
      if (next.opcode() == WsFrames.CLOSE) {
        sendClose(next);
        return;
      }
      ctx.write(next.forWrite()).addListener(next);
      unflushed = true;
      sent(next, now);
    }
    if (unflushed) {
      lastOutNanos = clock.nanoTime();
    }
    flushIfWritten();
  }

  private boolean flushTimerStarted() {
    return flushTimer != null || closeSent;
  }

  private void sendClose(Frame close) {
    closeSent = true;
    inbound.discardMessages();
    if (handshake.onServerCloseSent()) {
      writeLast(close);
    } else {
      write(close);
      flushIfWritten();
      closeTimer = ctx.executor().schedule(this::onCloseTimeout, settings.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }
  }

  /** The server's own frame (a pong, a ping, a close), written now. */
  private void write(Frame frame) {
    ctx.write(frame.forWrite(), ctx.voidPromise());
    unflushed = true;
    lastOutNanos = clock.nanoTime();
  }

  private void flushIfWritten() {
    if (unflushed) {
      unflushed = false;
      ctx.flush();
    }
  }

  /** Counts a data frame written in a drain that started at {@code now} ({@link System#nanoTime}). */
  private void sent(Frame frame, long now) {
    int size = frame.payloadLength();
    connection.stats().sent(size, now);
    metrics.framesOut.inc();
    metrics.bytesOut.inc(size);
  }

  /**
   * Writes the server's last frame and then ends its side of the connection ({@link OutputEnd}).
   * The client's side is read (and ignored) until it ends too, for at most the close timeout.
   */
  private void writeLast(Frame frame) {
    outputEnded = true;
    unflushed = false;
    ctx.writeAndFlush(frame.forWrite())
        .addListener(
            (ChannelFutureListener)
                written -> {
                  if (written.isSuccess()) {
                    OutputEnd.after(channel);
                  } else {
                    channel.close();
                  }
                });
    cancel(closeTimer);
    closeTimer = ctx.executor().schedule(this::onCloseTimeout, settings.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
  }

  /** The client did not finish the close handshake, or take what preceded a graceful close, in time: reset, and counted. */
  private void onCloseTimeout() {
    if (channel.isActive()) {
      metrics.closeTimeouts.inc();
      cutOff();
    }
  }

  /** Resets the connection: the socket drops what it has not written yet. */
  private void cutOff() {
    if (channel.isActive()) {
      channel.config().setOption(ChannelOption.SO_LINGER, 0);
      channel.close();
    }
  }

  private void onFlushTimeout() {
    if (!closeSent && !ended) {
      // the reader did not take what was queued in time: drop it and close now
      metrics.framesDropped.inc(connection.outbound().discardPending());
      if (channel.isWritable()) {
        drain();
      } else {
        onCloseTimeout();
      }
    }
  }

  private void onPingTimer() {
    long now = clock.nanoTime();
    if (now - lastInNanos >= settings.idleTimeout().toNanos()) {
      // not even a pong for the idle timeout: the client is gone without closing
      endReason = "idle: nothing from the client for " + settings.idleTimeout().toSeconds() + " s";
      metrics.connectionsIdle.inc();
      cutOff();
      return;
    }
    // quiet either way for half an interval: a pong proves a reader that only receives is there,
    // and a ping keeps a proxy's read timeout from closing a connection the node sends nothing;
    // a full channel takes it too, behind what it holds, so a slow reader answers it in time
    long idle = now - Math.min(lastInNanos, lastOutNanos);
    if (idle >= settings.pingInterval().toNanos() / 2 && !outputEnded && !closeSent && !handshake.isClosing()) {
      write(PING);
      flushIfWritten();
    }
  }

  // ---- the memory budget

  @Override
  public long held() {
    Channel ch = channel;
    long inChannel = ch == null ? 0 : ch.isWritable() ? 0 : ch.config().getWriteBufferHighWaterMark();
    return connection.outbound().queuedBytes() + inbound.reservedBytes() + inChannel;
  }

  @Override
  public void shed() {
    // what is queued goes at once, from the shedding thread; the rest on the channel's own
    metrics.framesDropped.inc(connection.outbound().dropQueued());
    ctx.executor().execute(this::onShed);
  }

  /**
   * Closes with 1013 at once, like a failure: the close is written now and the connection ends
   * once it is. One whose last frame is already on its way (its own 1013 for want of room for a
   * message it was sending, another failure's close, its answer to the client's close) ends with
   * it, keeping its code and reason. A channel that could not take more could not take the
   * close either, and one that waits for the client's close after its own has nothing more to
   * send: they are cut off at once, which frees what they hold.
   */
  private void onShed() {
    if (ended || outputEnded) {
      return;
    }
    endReason = SHED_REASON;
    inbound.discardMessages();
    connection.close(CloseCodes.TRY_AGAIN_LATER, "node memory budget");
    boolean waiting = handshake.awaitsPeerClose();
    handshake.onFailure();
    if (!channel.isWritable() || waiting) {
      cutOff();
    } else {
      drain(); // the 1013 goes now: a client's close read before a later drain would find no close owed
    }
  }
}
