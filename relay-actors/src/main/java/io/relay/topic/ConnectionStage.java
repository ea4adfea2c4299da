package io.relay.topic;

import io.relay.RelaySettings;
import io.relay.metrics.RelayMetrics;
import io.relay.ws.CloseCodes;
import io.relay.ws.CloseFrame;
import io.relay.ws.CloseHandshake;
import io.relay.ws.FramesInSocket;
import io.relay.ws.InboundProtocol;
import io.relay.ws.MemoryBudget;
import io.relay.ws.ReadArrays;
import io.relay.ws.SocketReads;
import io.relay.ws.SocketOutput;
import io.relay.ws.WsFrames.Frame;
import io.relay.ws.WsFrames;
import java.io.IOException;
import java.util.ArrayDeque;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.InHandler;
import org.apache.pekko.stream.stage.OutHandler;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * One connection's WebSocket protocol in a single stage, over the connection's bytes after the
 * upgrade: the glue between the socket, the protocol core of the {@code ws} package and the
 * topic. The client's bytes go to its {@link InboundProtocol}, each message it assembles to the
 * topic's {@link Room}; pongs, the connection's outbound queue, pings and close frames go back,
 * each data frame as the bytes rendered once for all readers; the {@link CloseHandshake} decides
 * when the connection ends. The connection counts what it holds in the node's {@link
 * MemoryBudget}, and lets go of it when the budget sheds it.
 *
 * <p>Keeping it to one stage keeps the per-connection graph, and so the memory per idle
 * connection, small; messages are never re-materialised as sub-streams.
 *
 * <p>Given its socket ({@link #useSocket}), the stage lets the topic's writers write their
 * frames to it while the stage is idle, from their own threads ({@link OutboundQueue}); it counts
 * what they write as its own. It sizes the socket's reads so that each ends where a frame ends,
 * and reads a large one in the array the socket lent for it ({@link SocketReads}); a message that
 * stays there gives the array back to {@link ReadArrays} once every reader is done with it, so
 * the stage holds each frame it hands the socket until the socket says it has written it
 * ({@link FramesInSocket}).
 *
 * <p>Why one class of over 300 lines: a GraphStage's handlers share its mutable state and run on
 * one thread; the protocol's rules are in the {@code ws} package ({@link InboundProtocol}, {@link
 * CloseHandshake}, {@code OutboundQueue}), and what is left here is their wiring to the inlet,
 * outlet, timers, the topic and the writers that write the socket directly, which only reads as
 * one piece.
 */
final class ConnectionStage extends GraphStage<FlowShape<ByteString, ByteString>> implements SocketOutput.User {
  private static final Frame PING = WsFrames.frame(WsFrames.PING, ByteString.emptyByteString());
  private static final String PING_TIMER = "ping";
  private static final String CLOSE_TIMER = "close";
  private static final String FLUSH_TIMER = "flush";
  private static final String SHED_REASON = "shed to keep the node within its memory budget";
  /** How the stage ends a connection that stopped taking what it is sent: the socket resets. */
  private static final CutOff CUT_OFF = new CutOff();
  /**
   * Pongs that may wait to be sent; past them the newest ping's pong replaces the last one
   * waiting (RFC 6455 section 5.5.3 allows answering only the most recent ping).
   */
  private static final int MAX_PENDING_PONGS = 16;

  private final Inlet<ByteString> in = Inlet.create("Connection.in");
  private final Outlet<ByteString> out = Outlet.create("Connection.out");
  private final FlowShape<ByteString, ByteString> shape = FlowShape.of(in, out);
  private final Connection connection;
  private final RelaySettings settings;
  private final RelayMetrics metrics;
  private final MemoryBudget budget;
  /** The socket writers may write directly, or null: given before the stage runs. */
  private volatile SocketOutput socket;
  /** How the socket's reads are sized and lent, or null: given with the socket. */
  private volatile SocketReads reads;
  /** The frames handed to the socket and not written yet (the stage runs once, per connection). */
  private final FramesInSocket inSocket = new FramesInSocket();

  ConnectionStage(Connection connection, RelaySettings settings, RelayMetrics metrics, MemoryBudget budget) {
    this.connection = connection;
    this.settings = settings;
    this.metrics = metrics;
    this.budget = budget;
  }

  /** The failure that resets a connection cut off by the server; it carries no stack trace. */
  static final class CutOff extends RuntimeException {
    CutOff() {
      super("connection cut off by the server", null, false, false);
    }
  }

  @Override
  public void useSocket(SocketOutput output, SocketReads reads) {
    this.socket = output;
    this.reads = reads;
  }

  @Override
  public FlowShape<ByteString, ByteString> shape() {
    return shape;
  }

  @Override
  public void written() {
    inSocket.written();
  }

  @Override
  public TimerGraphStageLogic createLogic(Attributes attributes) {
    return new Logic();
  }

  private final class Logic extends TimerGraphStageLogic
      implements InHandler, OutHandler, InboundProtocol.Listener, MemoryBudget.Holder {
    private final boolean canWrite = connection.grant().canWrite();
    private final InboundProtocol inbound = new InboundProtocol(this, canWrite, settings.maxMessageBytes(), budget);
    private final CloseHandshake handshake = new CloseHandshake();
    /**
     * Control frames to send before anything else: pongs, then perhaps the answer to a close.
     * Starts at the smallest, as it is mostly empty.
     */
    private final ArrayDeque<Frame> controls = new ArrayDeque<>(1);
    /** The last of {@code controls} is the server's last frame. */
    private boolean lastControlEnds;
    /** The server's close frame from the outbound queue went out. */
    private boolean closeSent;
    private boolean flushTimerStarted;
    private String endReason = "disconnected";
    private long lastOutNanos = System.nanoTime();
    /** When a writer last wrote a frame to the socket directly. */
    private volatile long lastDirectNanos = lastOutNanos;
    private final SocketOutput output = socket;
    private final SocketReads socketReads = reads;
    /**
     * The array of {@link ReadArrays} lent with the read being read, or null. Given back once the
     * read is read if no message stayed in it.
     */
    private byte[] lentArray;
    /**
     * The frame of the message that stayed in {@link #lentArray}, held by the stage until the rest
     * of the read is read, or null (at most one message of a read stays in its array).
     */
    private Frame inReadArray;
    private AsyncCallback<Object> shedCallback;

    Logic() {
      super(shape);
      setHandlers(in, out, this);
    }

    @Override
    public void preStart() {
      AsyncCallback<Object> wake = createAsyncCallback(ignored -> onWake());
      shedCallback = createAsyncCallback(ignored -> onShed());
      budget.register(this);
      connection.attached();
      connection.outbound().attach(() -> wake.invoke(Boolean.TRUE), output == null ? null : this::writeDirectly);
      scheduleWithFixedDelay(PING_TIMER, settings.pingInterval(), settings.pingInterval());
      pull(in);
    }

    @Override
    public void postStop() {
      budget.unregister(this);
      inSocket.abandonAll();
      connection.outbound().dispose();
      inbound.release();
      int code = connection.closeCode();
      String reason = code != 0 ? "closed by server with " + code : endReason;
      TopicActor.Command left = new TopicActor.Left(connection.id(), reason);
      if (connection.topicActor() != null) {
        connection.topicActor().tell(left);
      }
    }

    // ---- client to server

    @Override
    public void onPush() {
      ByteString bytes = grab(in);
      if (!inbound.hasEnded()) {
        // the socket stage's reads are arrays of their own, handed over: no copy here, and a
        // message that fills most of one stays in it
        lentArray = socketReads == null ? null : socketReads.lentArray(bytes);
        try {
          inbound.readHandedOver(lentArray != null ? lentArray : bytes.toArrayUnsafe(), bytes.length());
        } finally {
          if (inReadArray != null) {
            // the read is read: the stage lets go of the frame that stayed in its array
            inReadArray.release();
            inReadArray = null;
          } else if (lentArray != null) {
            // no message stayed in it: the protocol copied out what it keeps
            ReadArrays.giveBack(lentArray);
          }
          lentArray = null;
        }
        if (socketReads != null) {
          socketReads.nextReadAtMost(inbound.nextReadBytes());
        }
      }
      pullIfIdle();
    }

    /** Reads on, unless control frames wait: a client that does not read its pongs is not read. */
    private void pullIfIdle() {
      if (controls.isEmpty() && !isClosed(in) && !hasBeenPulled(in)) {
        pull(in);
      }
    }

    @Override
    public void onUpstreamFinish() {
      completeStage();
    }

    @Override
    public void onUpstreamFailure(Throwable cause) {
      endReason = "connection failed: " + cause.getClass().getSimpleName();
      completeStage();
    }

    @Override
    public void onMessage(byte opcode, byte[] bytes, int start, int size) {
      metrics.framesIn.inc();
      metrics.bytesIn.inc(size);
      connection.stats().received(size, System.nanoTime());
      if (bytes != null) {
        Frame frame =
            size == 0
                ? WsFrames.frame(opcode, ByteString.emptyByteString())
                : WsFrames.frame(opcode, bytes, start, size);
        if (bytes == lentArray) {
          // the frame gives the array back, once its readers and this stage, which reads on in
          // the same array, have let go of it
          frame.inReadArray(bytes);
          inReadArray = frame;
        }
        connection.room().fanOut(connection, frame);
      } else if (!canWrite) {
        connection.stats().refused();
        metrics.framesRefused.inc();
      }
    }

    @Override
    public void onPing(byte[] payload) {
      if (controls.size() >= MAX_PENDING_PONGS) {
        controls.pollLast();
      }
      sendControl(WsFrames.frame(WsFrames.PONG, ByteString.fromArrayUnsafe(payload)), false);
    }

    @Override
    public void onClose(CloseFrame close) {
      endReason = "closed by client with " + close.code();
      Frame answer = handshake.onPeerClose(close);
      if (answer == null) {
        completeStage();
      } else {
        sendControl(answer, true);
      }
    }

    @Override
    public void onViolation(int closeCode, String reason) {
      if (handshake.onFailure()) {
        connection.close(closeCode, reason);
        onWake();
      } else {
        completeStage();
      }
    }

    private void sendControl(Frame frame, boolean last) {
      controls.addLast(frame);
      lastControlEnds = last;
      if (isAvailable(out)) {
        onPull();
      }
    }

    // ---- server to client

    @Override
    public void onPull() {
      if (!controls.isEmpty()) {
        if (sendRestFirst()) {
          return;
        }
        pushOut(controls.pollFirst());
        if (controls.isEmpty()) {
          if (lastControlEnds) {
            endOutput();
          } else {
            pullIfIdle();
          }
        }
        return;
      }
      if (closeSent || lastControlEnds) {
        return;
      }
      Frame next = connection.outbound().poll();
      if (next == null) {
        return;
      }
      if (next.isClose()) {
        pushOut(next);
        closeSent = true;
        inbound.discardMessages();
        if (handshake.onServerCloseSent()) {
          endOutput();
        } else {
          scheduleOnce(CLOSE_TIMER, settings.closeTimeout());
        }
      } else {
        sendData(next);
      }
    }

    /**
     * Before a frame of the stage's own: stops writers writing the socket and sends what one of
     * them left of a frame, if anything. True if it did, and the stage's frame must wait.
     */
    private boolean sendRestFirst() {
      Frame partly = connection.outbound().takeOver();
      if (partly == null) {
        return false;
      }
      sendData(partly);
      return true;
    }

    /** Hands a data frame to the socket. */
    private void sendData(Frame frame) {
      pushOut(frame);
      if (!frame.isRest()) {
        sent(frame, lastOutNanos);
      }
    }

    private void sent(Frame frame, long now) {
      int size = frame.payloadLength();
      connection.stats().sent(size, now);
      metrics.framesOut.inc();
      metrics.bytesOut.inc(size);
    }

    /**
     * Writes a frame to the socket from a writer's thread, while the stage is idle (the queue
     * makes sure of that and of one writer at a time); counted as sent by this connection.
     */
    private int writeDirectly(Frame frame) {
      int written;
      try {
        written = output.write(frame.wire());
      } catch (IOException e) {
        return -1; // the stage meets the failure when it writes the frame again
      }
      long now = System.nanoTime();
      lastDirectNanos = now;
      sent(frame, now);
      metrics.framesDirect.inc();
      if (written < frame.wire().length()) {
        metrics.framesDirectPartial.inc();
      }
      return written;
    }

    /**
     * Ends the output after the server's last frame: the socket sends what is written and then
     * ends its side of the TCP connection. The client's side is read (and ignored) until it ends
     * too, for at most the close timeout.
     */
    private void endOutput() {
      complete(out);
      if (isClosed(in)) {
        completeStage();
      } else {
        scheduleOnce(CLOSE_TIMER, settings.closeTimeout());
        pullIfIdle();
      }
    }

    @Override
    public void onDownstreamFinish(Throwable cause) {
      completeStage();
    }

    // ---- the memory budget

    @Override
    public long held() {
      return connection.outbound().queuedBytes() + inSocket.bytes() + inbound.reservedBytes();
    }

    @Override
    public void shed() {
      // what is queued goes at once, from the shedding thread; the rest on the stage's own
      metrics.framesDropped.inc(connection.outbound().dropQueued());
      shedCallback.invoke(Boolean.TRUE);
    }

    /**
     * Closes with 1013 at once, like a failure: the close goes out next and the connection ends
     * once it is written. A connection whose socket has not yet taken the last frame (handed to
     * it by the stage, or written in part by a writer) could not take the close either: it is
     * cut off at once, which frees what its socket holds too.
     */
    private void onShed() {
      endReason = SHED_REASON;
      inbound.discardMessages();
      connection.close(CloseCodes.TRY_AGAIN_LATER, "node memory budget");
      Frame partly = connection.outbound().takeOver();
      if (partly != null) {
        partly.release();
      }
      if (partly != null || !inSocket.isEmpty() || !handshake.onFailure()) {
        cutOff();
      } else {
        onWake();
      }
    }

    /** Resets the connection: the socket drops what it has not written yet. */
    private void cutOff() {
      failStage(CUT_OFF);
    }

    /** Hands a frame to the socket, holding it until the socket has written it ({@link ConnectionStage#written}). */
    private void pushOut(Frame frame) {
      push(out, frame.wire());
      inSocket.handed(frame);
      lastOutNanos = System.nanoTime();
    }

    private void onWake() {
      if (!flushTimerStarted && !closeSent && connection.outbound().isClosing()) {
        flushTimerStarted = true;
        scheduleOnce(FLUSH_TIMER, settings.closeTimeout());
      }
      if (isAvailable(out)) {
        onPull();
      }
    }

    @Override
    public void onTimer(Object key) {
      if (CLOSE_TIMER.equals(key)) {
        cutOff();
      } else if (FLUSH_TIMER.equals(key)) {
        if (!closeSent) {
          // the reader did not take what was queued in time: drop it and close now
          connection.outbound().discardPending();
          if (isAvailable(out)) {
            onPull();
          } else {
            cutOff();
          }
        }
      } else if (PING_TIMER.equals(key)) {
        long now = System.nanoTime();
        long idle = Math.min(now - lastOutNanos, now - lastDirectNanos);
        if (idle >= settings.pingInterval().toNanos() / 2
            && isAvailable(out)
            && controls.isEmpty()
            && !closeSent
            && !handshake.isClosing()) {
          if (!sendRestFirst()) {
            pushOut(PING);
          }
        }
      }
    }
  }
}
