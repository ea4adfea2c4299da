package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.RelaySettings;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import io.relay.ws.BufferChecks;
import io.relay.ws.ClientFrames;
import io.relay.ws.MemoryBudget;
import io.relay.ws.ReadArrays;
import io.relay.ws.SocketReads;
import io.relay.ws.WsFrames;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A writer's connection stage reading a socket read whose array a message stays in, while the
 * topic's reader is idle and so written by the writer's own thread: the interleaving in which the
 * reader lets go of the message before the stage has read the rest of the read.
 */
class ConnectionStageTest {
  private static final ActorTestKit KIT = ActorTestKit.create("connection-stage", TestClusterConfig.with(Map.of()));
  private static final Duration WAIT = Duration.ofSeconds(5);

  private final RelayMetrics metrics = new RelayMetrics();
  private final MemoryBudget budget = new MemoryBudget(1 << 30, (holder, held) -> {});
  private final RelaySettings settings = RelaySettings.create(KIT.system().settings().config());

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aMessageReadAfterOneThatStayedInTheReadsArrayIsIntactWhenTheReaderWasWrittenAtOnce() throws Exception {
    Room room = new Room(metrics, budget);
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    writer.joined(room, null);
    Connection reader = TestConnections.connection("t", "r", "read");
    List<byte[]> written = new CopyOnWriteArrayList<>();
    // the reader's socket: each frame written by the writer's thread is copied, as a real socket does
    reader.outbound().attach(() -> {}, frame -> {
      written.add(frame.wire().toArray());
      return frame.wire().length();
    });
    assertNull(reader.outbound().poll(), "the reader is idle: the writer writes its socket itself");
    room.setReaders(new Connection[] {writer, reader});

    byte[] first = payload(20_000, 1); // fills most of the read: it stays in the read's array
    byte[] second = payload(3_000, 2); // copied out of the same array, after the first is relayed
    byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, first).frame(WsFrames.BINARY, true, second).bytes();
    byte[] array = ReadArrays.take(wire.length);
    System.arraycopy(wire, 0, array, 0, wire.length);
    ByteString read = ByteString.fromArrayUnsafe(array, 0, wire.length);
    ConnectionStage stage = new ConnectionStage(writer, settings, metrics, budget);
    stage.useSocket(null, new LentRead(read, array));

    Done done =
        Source.single(read)
            .via(Flow.fromGraph(stage))
            .runWith(Sink.ignore(), Materializer.matFromSystem(KIT.system()))
            .toCompletableFuture()
            .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    assertEquals(Done.getInstance(), done);

    Await.until("both messages written to the reader's socket", WAIT, () -> written.size() == 2, () -> written.size() + " written");
    assertArrayEquals(first, payloadOf(written.get(0)), "the message that stayed in the read's array");
    assertArrayEquals(second, payloadOf(written.get(1)), "the message read after it, out of the same array");
    assertSame(array, ReadArrays.take(wire.length), "the array went back to the pool once the stage had read it");
    assertTrue(BufferChecks.faults().isEmpty(), () -> "faults: " + BufferChecks.faults());
    assertEquals(0, budget.used(), "every holder let go");
  }

  /** {@code size} bytes, each a function of its index and {@code seed}. */
  private static byte[] payload(int size, int seed) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i * 31 + seed);
    }
    return bytes;
  }

  /** The payload of one server frame (unmasked, its header two or four bytes for these sizes). */
  private static byte[] payloadOf(byte[] frame) {
    int header = (frame[1] & 0x7F) == 126 ? 4 : 2;
    return Arrays.copyOfRange(frame, header, frame.length);
  }

  /** A socket that lent the array of its one read. */
  private record LentRead(ByteString read, byte[] array) implements SocketReads {
    @Override
    public void nextReadAtMost(int bytes) {}

    @Override
    public byte[] lentArray(ByteString asked) {
      return asked == read ? array : null;
    }
  }
}
