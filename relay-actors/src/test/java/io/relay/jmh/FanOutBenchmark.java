package io.relay.jmh;

import io.relay.metrics.RelayMetrics;
import io.relay.topic.Connection;
import io.relay.topic.Room;
import io.relay.ws.OutboundQueue;
import io.relay.ws.Unmasker;
import io.relay.ws.WsFrames;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The relay's per-frame work for one client message, without the sockets: copy the payload out
 * of the socket read into the message's array (with the bytes in front of it, where the server's
 * header goes) and unmask it there (the one copy), frame it in place as one shared frame, offer it to every reader's outbound queue through the topic's {@link
 * Room}, count it as the connection stage does, and drain each reader's queue as its stage would. Run with {@code -prof gc} for the allocation per frame (see
 * docs/benchmarks.md).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FanOutBenchmark {
  @Param({"1", "4", "64"})
  int readers;

  @Param({"100", "20480"})
  int size;

  private final RelayMetrics metrics = new RelayMetrics();
  private Room room;
  private Connection writer;
  private Connection[] readerConnections;
  /** The socket read: a client frame's header (as long as a 64-bit length's), then the payload. */
  private static final int CLIENT_HEADER = 14;

  private byte[] masked;
  private int mask;

  @Setup(Level.Trial)
  public void setUp() {
    room = new Room(metrics, null);
    writer = connection(0, List.of("write"));
    readerConnections = new Connection[readers];
    for (int i = 0; i < readers; i++) {
      readerConnections[i] = connection(i + 1, List.of("read"));
      readerConnections[i].outbound().attach(() -> { });
    }
    room.setReaders(readerConnections);
    byte[] bytes = new byte[CLIENT_HEADER + size];
    ThreadLocalRandom.current().nextBytes(bytes);
    masked = bytes;
    mask = ThreadLocalRandom.current().nextInt();
  }

  private static Connection connection(long id, List<String> scopes) {
    Connection.Grant grant =
        new Connection.Grant("bench", "b", scopes, Instant.now(), Instant.now().plusSeconds(3600), "127.0.0.1", "jmh");
    return new Connection(id, grant, new OutboundQueue(256, 16 << 20));
  }

  /** One message in, {@code readers} frames out. */
  @Benchmark
  public void relayOneMessage(Blackhole bh) {
    int headerBytes = WsFrames.headerBytes(size);
    byte[] message = Arrays.copyOfRange(masked, CLIENT_HEADER - headerBytes, CLIENT_HEADER + size);
    Unmasker.unmask(message, headerBytes, size, mask, 0);
    metrics.framesIn.inc();
    metrics.bytesIn.inc(size);
    WsFrames.Frame frame = WsFrames.frame(WsFrames.BINARY, message, headerBytes, size);
    room.fanOut(writer, frame);
    for (Connection reader : readerConnections) {
      WsFrames.Frame out = reader.outbound().poll();
      metrics.framesOut.inc();
      metrics.bytesOut.inc(out.payloadLength());
      bh.consume(out);
    }
  }

  /** The per-frame metrics alone: the four counter increments of one message to one reader. */
  @Benchmark
  public void countersOnly() {
    metrics.framesIn.inc();
    metrics.bytesIn.inc(size);
    metrics.framesOut.inc();
    metrics.bytesOut.inc(size);
  }

  /** The unmasking alone, eight bytes at a time, in place. */
  @Benchmark
  public byte[] unmaskOnly() {
    Unmasker.unmask(masked, CLIENT_HEADER, size, mask, 0);
    return masked;
  }
}
