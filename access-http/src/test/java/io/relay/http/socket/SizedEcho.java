package io.relay.http.socket;

import io.relay.ws.ReadSizing;
import io.relay.ws.SocketOutput;
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

/** An echo given its socket, which asks for reads of at most a size and notes the largest it got. */
final class SizedEcho extends GraphStage<FlowShape<ByteString, ByteString>> implements SocketOutput.User {
  private final Inlet<ByteString> in = Inlet.create("SizedEcho.in");
  private final Outlet<ByteString> out = Outlet.create("SizedEcho.out");
  private final int readBytes;
  final AtomicInteger largestRead = new AtomicInteger();
  private volatile ReadSizing reads;

  SizedEcho(int readBytes) {
    this.readBytes = readBytes;
  }

  @Override
  public void useSocket(SocketOutput output, ReadSizing reads) {
    this.reads = reads;
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
