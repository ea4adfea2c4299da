package io.relay.topic;

import io.relay.RelaySettings;
import io.relay.metrics.RelayMetrics;
import io.relay.ws.CloseCodes;
import io.relay.ws.Unmasker;
import io.relay.ws.WsFrames;
import java.util.OptionalInt;
import org.apache.pekko.http.impl.engine.ws.FrameData;
import org.apache.pekko.http.impl.engine.ws.FrameEvent;
import org.apache.pekko.http.impl.engine.ws.FrameHeader;
import org.apache.pekko.http.impl.engine.ws.FrameStart;
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
 * One connection's whole WebSocket stream in a single stage: it reads the client's frames
 * (unmasking, reassembling, enforcing the size limit, answering pings and closes), hands each
 * message to its topic's {@link Room}, and writes the connection's outbound queue, pings and close
 * frames back.
 *
 * <p>Keeping it to one stage keeps the per-connection graph, and so the memory per idle
 * connection, small; messages are never re-materialised as sub-streams.
 */
final class ConnectionStage extends GraphStage<FlowShape<FrameEvent, FrameEvent>> {
  private static final FrameStart PING = WsFrames.frame(WsFrames.PING, ByteString.emptyByteString());
  private static final String PING_TIMER = "ping";
  private static final String CLOSE_TIMER = "close";
  private static final String FLUSH_TIMER = "flush";
  private static final int NO_MESSAGE = -1;

  private final Inlet<FrameEvent> in = Inlet.create("Connection.in");
  private final Outlet<FrameEvent> out = Outlet.create("Connection.out");
  private final FlowShape<FrameEvent, FrameEvent> shape = FlowShape.of(in, out);
  private final Connection connection;
  private final RelaySettings settings;
  private final RelayMetrics metrics;

  ConnectionStage(Connection connection, RelaySettings settings, RelayMetrics metrics) {
    this.connection = connection;
    this.settings = settings;
    this.metrics = metrics;
  }

  @Override
  public FlowShape<FrameEvent, FrameEvent> shape() {
    return shape;
  }

  @Override
  public TimerGraphStageLogic createLogic(Attributes attributes) {
    return new Logic();
  }

  private final class Logic extends TimerGraphStageLogic implements InHandler, OutHandler {
    private final boolean canWrite = connection.grant().canWrite();
    private FrameStart pendingControl;
    private boolean completeAfterControl;
    private boolean closeSent;
    private boolean flushTimerStarted;
    private boolean discarding;
    private String endReason = "disconnected";
    private long lastOutNanos = System.nanoTime();
    // the frame being read
    private byte frameOpcode;
    private boolean frameFin;
    private int frameMask;
    private long frameOffset;
    private ByteString control = ByteString.emptyByteString();
    // the message being assembled
    private int messageOpcode = NO_MESSAGE;
    private ByteString message = ByteString.emptyByteString();
    private long messageSize;

    Logic() {
      super(shape);
      setHandlers(in, out, this);
    }

    @Override
    public void preStart() {
      AsyncCallback<Object> wake = createAsyncCallback(ignored -> onWake());
      connection.attached();
      connection.outbound().attach(() -> wake.invoke(Boolean.TRUE));
      scheduleWithFixedDelay(PING_TIMER, settings.pingInterval(), settings.pingInterval());
      pull(in);
    }

    @Override
    public void postStop() {
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
      FrameEvent event = grab(in);
      if (event instanceof FrameStart start) {
        onFrameStart(start);
      } else {
        FrameData data = (FrameData) event;
        consume(data.data(), data.lastPart());
      }
      if (pendingControl == null && !isClosed(in) && !hasBeenPulled(in)) {
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

    private void onFrameStart(FrameStart start) {
      FrameHeader header = start.header();
      byte opcode = header.opcode().code();
      OptionalInt mask = WsFrames.maskOf(header);
      if (mask.isEmpty() || header.rsv1() || header.rsv2() || header.rsv3()) {
        protocolError("client frames must be masked and carry no extension bits");
        return;
      }
      frameOpcode = opcode;
      frameFin = header.fin();
      frameMask = mask.getAsInt();
      frameOffset = 0;
      if (opcode >= WsFrames.CLOSE) {
        if (!header.fin() || header.length() > 125 || opcode > WsFrames.PONG) {
          protocolError("bad control frame");
          return;
        }
        control = ByteString.emptyByteString();
      } else if (!discarding) {
        if (opcode == WsFrames.CONTINUATION) {
          if (messageOpcode == NO_MESSAGE) {
            protocolError("continuation without a message");
            return;
          }
        } else if (opcode == WsFrames.TEXT || opcode == WsFrames.BINARY) {
          if (messageOpcode != NO_MESSAGE) {
            protocolError("new message inside a fragmented one");
            return;
          }
          messageOpcode = opcode;
        } else {
          protocolError("unknown opcode " + opcode);
          return;
        }
        if (messageSize + header.length() > settings.maxMessageBytes()) {
          serverClose(CloseCodes.TOO_BIG, "message too big");
          return;
        }
      }
      consume(start.data(), start.lastPart());
    }

    private void consume(ByteString chunk, boolean lastPart) {
      boolean isControl = frameOpcode >= WsFrames.CLOSE;
      if (isControl) {
        control = control.concat(Unmasker.unmask(chunk, frameMask, frameOffset));
        frameOffset += chunk.length();
        if (lastPart) {
          onControl(frameOpcode, control);
        }
        return;
      }
      if (discarding) {
        return;
      }
      messageSize += chunk.length();
      if (canWrite && !chunk.isEmpty()) {
        message = message.concat(Unmasker.unmask(chunk, frameMask, frameOffset));
      }
      frameOffset += chunk.length();
      if (lastPart && frameFin) {
        onMessage((byte) messageOpcode, message, (int) messageSize);
        messageOpcode = NO_MESSAGE;
        message = ByteString.emptyByteString();
        messageSize = 0;
      }
    }

    private void onMessage(byte opcode, ByteString payload, int size) {
      metrics.framesIn.inc();
      metrics.bytesIn.inc(size);
      connection.stats().received(size, System.nanoTime());
      if (canWrite) {
        connection.room().fanOut(connection, WsFrames.frame(opcode, payload));
      } else {
        connection.stats().refused();
        metrics.framesRefused.inc();
      }
    }

    private void onControl(byte opcode, ByteString payload) {
      switch (opcode) {
        case WsFrames.PING -> sendControl(WsFrames.frame(WsFrames.PONG, payload), false);
        case WsFrames.CLOSE -> onPeerClose(WsFrames.closeCode(payload));
        default -> { } // an unsolicited pong needs no answer
      }
    }

    private void onPeerClose(int code) {
      if (closeSent) {
        completeStage();
        return;
      }
      endReason = "closed by client with " + code;
      discarding = true;
      int echo = (code == 1005 || code == 1006 || code == 1015) ? CloseCodes.NORMAL : code;
      sendControl(WsFrames.close(echo, ""), true);
    }

    private void protocolError(String reason) {
      serverClose(CloseCodes.PROTOCOL_ERROR, reason);
    }

    private void serverClose(int code, String reason) {
      discarding = true;
      message = ByteString.emptyByteString();
      connection.close(code, reason);
    }

    private void sendControl(FrameStart frame, boolean thenComplete) {
      pendingControl = frame;
      completeAfterControl = thenComplete;
      if (isAvailable(out)) {
        onPull();
      }
    }

    // ---- server to client

    @Override
    public void onPull() {
      if (pendingControl != null) {
        FrameStart frame = pendingControl;
        pendingControl = null;
        pushOut(frame);
        if (completeAfterControl) {
          completeStage();
        } else if (!isClosed(in) && !hasBeenPulled(in)) {
          pull(in);
        }
        return;
      }
      if (closeSent) {
        return;
      }
      FrameStart next = connection.outbound().poll();
      if (next == null) {
        return;
      }
      pushOut(next);
      if (next.header().opcode().code() == WsFrames.CLOSE) {
        closeSent = true;
        discarding = true;
        scheduleOnce(CLOSE_TIMER, settings.closeTimeout());
      } else {
        int size = next.data().length();
        connection.stats().sent(size, lastOutNanos);
        metrics.framesOut.inc();
        metrics.bytesOut.inc(size);
      }
    }

    @Override
    public void onDownstreamFinish(Throwable cause) {
      completeStage();
    }

    private void pushOut(FrameStart frame) {
      push(out, frame);
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
        completeStage();
      } else if (FLUSH_TIMER.equals(key)) {
        if (!closeSent) {
          // the reader did not take what was queued in time: drop it and close now
          connection.outbound().discardPending();
          if (isAvailable(out)) {
            onPull();
          } else {
            completeStage();
          }
        }
      } else if (PING_TIMER.equals(key)) {
        long idle = System.nanoTime() - lastOutNanos;
        if (idle >= settings.pingInterval().toNanos() / 2
            && isAvailable(out)
            && pendingControl == null
            && !closeSent) {
          pushOut(PING);
        }
      }
    }
  }
}
