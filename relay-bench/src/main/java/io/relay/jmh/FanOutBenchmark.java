package io.relay.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.prometheus.metrics.core.metrics.Counter;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.topic.Connection;
import io.relay.topic.OutboundQueue;
import io.relay.topic.Room;
import io.relay.ws.CloseFrame;
import io.relay.ws.InboundProtocol;
import io.relay.ws.Unmasker;
import io.relay.ws.Utf8Validator;
import io.relay.ws.WsFrames;
import java.time.Instant;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The relay's per-frame work for one client message, without the channels: the protocol core
 * ({@link InboundProtocol}) reads the masked frame from the channel's read, copies the payload out
 * into the message's array, unmasks it there and, for text, checks its UTF-8; the message is
 * copied once into a pooled buffer behind its server header, offered to every reader's outbound
 * queue through the topic's {@link Room}, counted as the connection's handler does, and drained
 * from each reader's queue as its handler would. {@code kind} compares a binary message with ASCII text and with text of two-byte
 * characters: the difference is the UTF-8 check. Run with {@code -prof gc} for the allocation per
 * frame (see docs/benchmark-notes.md).
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

  /** binary, ascii (text of one-byte characters) or greek (text of two-byte characters). */
  @Param({"binary", "ascii", "greek"})
  String kind;

  private final RelayMetrics metrics = new RelayMetrics();
  private Room room;
  private Connection writer;
  private Connection[] readerConnections;
  private InboundProtocol protocol;
  private Blackhole blackhole;

  /** The channel's read: one whole masked client frame. */
  private byte[] read;
  /** The same read in a pooled direct buffer, as the node's reads are. */
  private ByteBuf readBuffer;
  /** The payload, unmasked. */
  private byte[] payload;
  private int mask;

  @Setup(Level.Trial)
  public void setUp(Blackhole blackhole) {
    this.blackhole = blackhole;
    room = new Room(metrics, MemoryBudget.unlimited());
    writer = connection(0, List.of("write"));
    readerConnections = new Connection[readers];
    for (int i = 0; i < readers; i++) {
      readerConnections[i] = connection(i + 1, List.of("read"));
      readerConnections[i].outbound().attach(() -> { });
    }
    room.setReaders(readerConnections);
    payload = payload(kind, size);
    mask = ThreadLocalRandom.current().nextInt();
    read = clientFrame(kind.equals("binary") ? WsFrames.BINARY : WsFrames.TEXT, payload, mask);
    readBuffer = PooledByteBufAllocator.DEFAULT.directBuffer(read.length).writeBytes(read);
    protocol = new InboundProtocol(new Listener(), true, 1 << 20, MemoryBudget.unlimited());
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    readBuffer.release();
  }

  private static byte[] payload(String kind, int size) {
    byte[] bytes = new byte[size];
    ThreadLocalRandom random = ThreadLocalRandom.current();
    switch (kind) {
      case "binary" -> random.nextBytes(bytes);
      case "ascii" -> {
        for (int i = 0; i < size; i++) {
          bytes[i] = (byte) (' ' + random.nextInt(95));
        }
      }
      case "greek" -> {
        for (int i = 0; i + 1 < size; i += 2) {
          int c = 0x3B1 + random.nextInt(24);
          bytes[i] = (byte) (0xC0 | (c >> 6));
          bytes[i + 1] = (byte) (0x80 | (c & 0x3F));
        }
        if (size % 2 == 1) {
          bytes[size - 1] = 'x';
        }
      }
      default -> throw new IllegalArgumentException("unknown kind " + kind);
    }
    return bytes;
  }

  /** A client frame as it arrives: header, masking key, masked payload. */
  private static byte[] clientFrame(byte opcode, byte[] payload, int mask) {
    int size = payload.length;
    int lengthBytes = size < 126 ? 0 : 2;
    byte[] frame = new byte[2 + lengthBytes + 4 + size];
    frame[0] = (byte) (0x80 | opcode);
    if (size < 126) {
      frame[1] = (byte) (0x80 | size);
    } else {
      frame[1] = (byte) (0x80 | 126);
      frame[2] = (byte) (size >> 8);
      frame[3] = (byte) size;
    }
    int at = 2 + lengthBytes;
    for (int i = 0; i < 4; i++) {
      frame[at + i] = (byte) (mask >> (24 - 8 * i));
    }
    System.arraycopy(payload, 0, frame, at + 4, size);
    Unmasker.unmask(frame, at + 4, size, mask, 0);
    return frame;
  }

  private static Connection connection(long id, List<String> scopes) {
    Connection.Grant grant =
        new Connection.Grant("bench", "b", scopes, Instant.now(), Instant.now().plusSeconds(3600), "127.0.0.1", "jmh");
    return new Connection(id, grant, new OutboundQueue(256, 16 << 20, Counter.builder().name("discarded").build()));
  }

  /** What a connection's handler does with a message: count it, frame it, fan it out. */
  private final class Listener implements InboundProtocol.Listener {
    @Override
    public void onMessage(byte opcode, byte[] bytes, int start, int size) {
      metrics.framesIn.inc();
      metrics.bytesIn.inc(size);
      WsFrames.Frame frame = WsFrames.message(PooledByteBufAllocator.DEFAULT, opcode, bytes, start, size);
      room.fanOut(writer, frame);
      frame.release();
      drain();
    }

    /** Each reader's queue drained, as its handler would. */
    private void drain() {
      for (Connection reader : readerConnections) {
        WsFrames.Frame out = reader.outbound().poll();
        metrics.framesOut.inc();
        metrics.bytesOut.inc(out.payloadLength());
        blackhole.consume(out);
        out.release();
      }
    }

    @Override
    public void onFrame(WsFrames.Frame frame) {
      metrics.framesIn.inc();
      metrics.bytesIn.inc(frame.payloadLength());
      room.fanOut(writer, frame);
      frame.release();
      drain();
    }

    @Override
    public void onPing(byte[] payload) {
      throw new IllegalStateException("no pings in this benchmark");
    }

    @Override
    public void onClose(CloseFrame close) {
      throw new IllegalStateException("no close in this benchmark");
    }

    @Override
    public void onViolation(int closeCode, String reason) {
      throw new IllegalStateException("the benchmark's frame broke a rule: " + reason);
    }
  }

  /** One message in, {@code readers} frames out. */
  @Benchmark
  public void relayOneMessage() {
    protocol.read(readBuffer.duplicate());
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
    Unmasker.unmask(read, read.length - size, size, mask, 0);
    return read;
  }

  /** The UTF-8 check alone, of the unmasked payload. */
  @Benchmark
  public boolean utf8Only() {
    return Utf8Validator.isValid(payload, 0, size);
  }
}
