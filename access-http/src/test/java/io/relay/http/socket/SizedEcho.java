package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.relay.testing.Await;
import io.relay.ws.SocketOutput;
import io.relay.ws.SocketReads;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * An echo given its socket, which asks for reads of at most a size and notes the largest it got,
 * and counts what it pushed to the socket and what the socket reported written.
 */
final class SizedEcho extends GraphStage<FlowShape<ByteString, ByteString>> implements SocketOutput.User {
  private final Inlet<ByteString> in = Inlet.create("SizedEcho.in");
  private final Outlet<ByteString> out = Outlet.create("SizedEcho.out");
  private final int readBytes;
  final AtomicInteger largestRead = new AtomicInteger();
  final AtomicInteger pushed = new AtomicInteger();
  final AtomicInteger written = new AtomicInteger();
  /** Set when the socket reported more elements written than were pushed to it. */
  volatile boolean reportedUnpushed;
  private volatile SocketReads reads;

  SizedEcho(int readBytes) {
    this.readBytes = readBytes;
  }

  @Override
  public void useSocket(SocketOutput output, SocketReads reads) {
    this.reads = reads;
  }

  @Override
  public void written() {
    if (written.incrementAndGet() > pushed.get()) {
      reportedUnpushed = true;
    }
  }

  /**
   * Waits until the socket has reported every element pushed to it written, and checks it never
   * reported more: called once the client has read the whole echo.
   */
  void assertEverythingReportedWritten() {
    Await.until(
        "the socket reported all " + pushed.get() + " elements pushed to it written (it reported " + written.get() + ")",
        TestSockets.DEADLINE,
        () -> written.get() == pushed.get());
    assertFalse(reportedUnpushed, "the socket reported more elements written than were pushed to it");
  }

  @Override
  public FlowShape<ByteString, ByteString> shape() {
    return FlowShape.of(in, out);
  }

  @Override
  public GraphStageLogic createLogic(Attributes attributes) {
    return new GraphStageLogic(shape()) {
      @Override
      public void preStart() {
        reads.nextReadAtMost(readBytes);
      }

      {
        setHandler(in, new AbstractInHandler() {
          @Override
          public void onPush() {
            ByteString bytes = grab(in);
            largestRead.accumulateAndGet(bytes.size(), Math::max);
            pushed.incrementAndGet();
            push(out, bytes);
          }
        });
        setHandler(out, new AbstractOutHandler() {
          @Override
          public void onPull() {
            pull(in);
          }
        });
      }
    };
  }
}
