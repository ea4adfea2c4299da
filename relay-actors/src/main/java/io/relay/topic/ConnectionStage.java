package io.relay.topic;

import io.relay.RelaySettings;
import io.relay.metrics.RelayMetrics;
import io.relay.ws.CloseCodes;
import io.relay.ws.FrameReader;
import io.relay.ws.Unmasker;
import io.relay.ws.WsFrames;
import io.relay.ws.WsFrames.Frame;
import java.util.Arrays;
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
 * One connection's whole WebSocket protocol in a single stage, over the connection's bytes after
 * the upgrade: it reads the client's frames (splitting, unmasking, reassembling, enforcing the
 * size limit, answering pings and closes), hands each message to its topic's {@link Room}, and
 * writes the connection's outbound queue, pings and close frames back, each frame as the bytes
 * rendered once for all readers.
 *
 * <p>Keeping it to one stage keeps the per-connection graph, and so the memory per idle
 * connection, small; messages are never re-materialised as sub-streams.
 */
final class ConnectionStage extends GraphStage<FlowShape<ByteString, ByteString>> {
  private static final Frame PING = WsFrames.frame(WsFrames.PING, ByteString.emptyByteString());
  private static final String PING_TIMER = "ping";
  private static final String CLOSE_TIMER = "close";
  private static final String FLUSH_TIMER = "flush";
  private static final int NO_MESSAGE = -1;
  private static final byte[] NO_BYTES = new byte[0];
  /** Room left in front of a message's payload for the server's frame header. */
  private static final int HEADROOM = WsFrames.MAX_HEADER_BYTES;
  /** How far ahead of the bytes that arrived a message's array may be made room for. */
  private static final int AHEAD = 64 * 1024;

  private final Inlet<ByteString> in = Inlet.create("Connection.in");
  private final Outlet<ByteString> out = Outlet.create("Connection.out");
  private final FlowShape<ByteString, ByteString> shape = FlowShape.of(in, out);
  private final Connection connection;
  private final RelaySettings settings;
  private final RelayMetrics metrics;

  ConnectionStage(Connection connection, RelaySettings settings, RelayMetrics metrics) {
    this.connection = connection;
    this.settings = settings;
    this.metrics = metrics;
  }

  @Override
  public FlowShape<ByteString, ByteString> shape() {
    return shape;
  }

  @Override
  public TimerGraphStageLogic createLogic(Attributes attributes) {
    return new Logic();
  }

  private final class Logic extends TimerGraphStageLogic implements InHandler, OutHandler, FrameReader.Handler {
    private final boolean canWrite = connection.grant().canWrite();
    private final FrameReader reader = new FrameReader();
    /** Stopped reading frames: the client broke the framing, nothing it sends can be trusted. */
    private boolean broken;
    private Frame pendingControl;
    /** The pending control frame is the answer to the client's close. */
    private boolean completing;
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
    private long frameLength;
    private byte[] control;
    // the message being assembled: its payload from messageStart on, unmasked, in its own array
    private int messageOpcode = NO_MESSAGE;
    private byte[] message = NO_BYTES;
    private int messageStart = HEADROOM;
    private int messageSize;

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
      ByteString bytes = grab(in);
      if (!broken && !completing) {
        // the socket stage's reads are whole arrays of their own: no copy here
        byte[] read = bytes.toArrayUnsafe();
        reader.read(read, 0, read.length, this);
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

    @Override
    public boolean onHeader(byte opcode, boolean fin, int rsv, boolean masked, int mask, long length) {
      if (!masked || rsv != 0) {
        protocolError("client frames must be masked and carry no extension bits");
        return false;
      }
      if (length < 0) {
        protocolError("bad frame length");
        return false;
      }
      frameOpcode = opcode;
      frameFin = fin;
      frameMask = mask;
      frameOffset = 0;
      frameLength = length;
      if (opcode >= WsFrames.CLOSE) {
        if (!fin || length > 125 || opcode > WsFrames.PONG) {
          protocolError("bad control frame");
          return false;
        }
        control = new byte[(int) length];
      } else if (!discarding) {
        if (opcode == WsFrames.CONTINUATION) {
          if (messageOpcode == NO_MESSAGE) {
            protocolError("continuation without a message");
            return false;
          }
        } else if (opcode == WsFrames.TEXT || opcode == WsFrames.BINARY) {
          if (messageOpcode != NO_MESSAGE) {
            protocolError("new message inside a fragmented one");
            return false;
          }
          messageOpcode = opcode;
        } else {
          protocolError("unknown opcode " + opcode);
          return false;
        }
        if (messageSize + length > settings.maxMessageBytes()) {
          serverClose(CloseCodes.TOO_BIG, "message too big");
        }
      }
      return true;
    }

    @Override
    public boolean onPayload(byte[] bytes, int start, int length, boolean last) {
      consume(bytes, start, length, last);
      return !broken && !completing && !isClosed(in);
    }

    private void consume(byte[] bytes, int start, int length, boolean lastPart) {
      boolean isControl = frameOpcode >= WsFrames.CLOSE;
      if (isControl) {
        System.arraycopy(bytes, start, control, (int) frameOffset, length);
        Unmasker.unmask(control, (int) frameOffset, length, frameMask, frameOffset);
        frameOffset += length;
        if (lastPart) {
          onControl(frameOpcode, ByteString.fromArrayUnsafe(control));
        }
        return;
      }
      if (discarding) {
        return;
      }
      if (canWrite && length > 0) {
        int headerBytes = WsFrames.headerBytes(length);
        if (messageSize == 0 && frameOffset == 0 && lastPart && frameFin && start >= headerBytes) {
          // the whole message in this read (the usual case): one copy that also takes the bytes
          // in front, where the server's header goes, so the JVM need not zero the new array
          message = Arrays.copyOfRange(bytes, start - headerBytes, start + length);
          messageStart = headerBytes;
        } else {
          // room for the rest of the frame, but never more than 64 KiB ahead of what arrived
          reserve(messageSize + (int) Math.min(frameLength - frameOffset, Math.max(length, AHEAD)));
          System.arraycopy(bytes, start, message, messageStart + messageSize, length);
        }
        Unmasker.unmask(message, messageStart + messageSize, length, frameMask, frameOffset);
      }
      messageSize += length;
      frameOffset += length;
      if (lastPart && frameFin) {
        onMessage((byte) messageOpcode, messageSize);
        messageOpcode = NO_MESSAGE;
        message = NO_BYTES;
        messageStart = HEADROOM;
        messageSize = 0;
      }
    }

    /**
     * Makes the message's array hold at least {@code size} payload bytes, at least doubling it
     * when it grows (a header alone never makes the node allocate: only bytes that arrived do).
     */
    private void reserve(int size) {
      if (messageStart + size > message.length) {
        int capacity = Math.max(HEADROOM + size, message == NO_BYTES ? 0 : 2 * message.length);
        message = Arrays.copyOf(message, (int) Math.min(capacity, HEADROOM + (long) settings.maxMessageBytes()));
      }
    }

    private void onMessage(byte opcode, int size) {
      metrics.framesIn.inc();
      metrics.bytesIn.inc(size);
      connection.stats().received(size, System.nanoTime());
      if (canWrite) {
        Frame frame =
            size == 0
                ? WsFrames.frame(opcode, ByteString.emptyByteString())
                : WsFrames.frame(opcode, message, messageStart, size);
        connection.room().fanOut(connection, frame);
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
      broken = true;
      serverClose(CloseCodes.PROTOCOL_ERROR, reason);
    }

    private void serverClose(int code, String reason) {
      discarding = true;
      message = NO_BYTES;
      connection.close(code, reason);
    }

    private void sendControl(Frame frame, boolean thenComplete) {
      pendingControl = frame;
      completing |= thenComplete;
      if (isAvailable(out)) {
        onPull();
      }
    }

    // ---- server to client

    @Override
    public void onPull() {
      if (pendingControl != null) {
        Frame frame = pendingControl;
        pendingControl = null;
        pushOut(frame);
        if (completing) {
          // ends the output after the close frame; the stage completes when the socket closes
          // (completing the whole stage here could close the socket before the frame is written)
          complete(out);
        } else if (!isClosed(in) && !hasBeenPulled(in)) {
          pull(in);
        }
        return;
      }
      if (closeSent) {
        return;
      }
      Frame next = connection.outbound().poll();
      if (next == null) {
        return;
      }
      pushOut(next);
      if (next.isClose()) {
        closeSent = true;
        discarding = true;
        scheduleOnce(CLOSE_TIMER, settings.closeTimeout());
      } else {
        int size = next.payloadLength();
        connection.stats().sent(size, lastOutNanos);
        metrics.framesOut.inc();
        metrics.bytesOut.inc(size);
      }
    }

    @Override
    public void onDownstreamFinish(Throwable cause) {
      completeStage();
    }

    private void pushOut(Frame frame) {
      push(out, frame.wire());
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
