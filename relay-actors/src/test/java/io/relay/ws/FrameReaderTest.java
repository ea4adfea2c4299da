package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class FrameReaderTest {
  /** One frame as written, and as the reader reported it. */
  private record Seen(byte opcode, boolean fin, int rsv, boolean masked, int mask, long length, byte[] payload) {}

  private static final class Recorder implements FrameReader.Handler {
    final List<Seen> frames = new ArrayList<>();
    private Seen header;
    private final ByteArrayOutputStream payload = new ByteArrayOutputStream();

    @Override
    public boolean onHeader(byte opcode, boolean fin, int rsv, boolean masked, int mask, long length) {
      header = new Seen(opcode, fin, rsv, masked, mask, length, null);
      return true;
    }

    @Override
    public boolean onPayload(ByteBuf bytes, int start, int length, boolean last) {
      byte[] piece = new byte[length];
      bytes.getBytes(start, piece);
      payload.write(piece, 0, length);
      if (last) {
        frames.add(new Seen(header.opcode(), header.fin(), header.rsv(), header.masked(), header.mask(), header.length(), payload.toByteArray()));
        payload.reset();
      }
      return true;
    }
  }

  private static byte[] encode(Seen frame) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write((frame.fin() ? 0x80 : 0) | (frame.rsv() << 4) | frame.opcode());
    int mask = frame.masked() ? 0x80 : 0;
    long length = frame.payload().length;
    if (length < 126) {
      out.write(mask | (int) length);
    } else if (length < 65_536) {
      out.write(mask | 126);
      out.write((int) (length >> 8));
      out.write((int) length);
    } else {
      out.write(mask | 127);
      for (int i = 7; i >= 0; i--) {
        out.write((int) (length >> (8 * i)));
      }
    }
    if (frame.masked()) {
      for (int i = 3; i >= 0; i--) {
        out.write(frame.mask() >> (8 * i));
      }
    }
    out.writeBytes(frame.payload());
    return out.toByteArray();
  }

  @Test
  void framesAreFoundWhateverTheReadBoundaries() {
    Random random = new Random(6455);
    for (int round = 0; round < 200; round++) {
      List<Seen> sent = new ArrayList<>();
      ByteArrayOutputStream wire = new ByteArrayOutputStream();
      int count = 1 + random.nextInt(6);
      for (int i = 0; i < count; i++) {
        int[] sizes = {0, 1, 125, 126, 127, 65_535, 65_536, 70_000};
        byte[] payload = new byte[random.nextBoolean() ? sizes[random.nextInt(sizes.length)] : random.nextInt(300)];
        random.nextBytes(payload);
        boolean masked = random.nextBoolean();
        Seen frame =
            new Seen((byte) random.nextInt(16), random.nextBoolean(), random.nextInt(8), masked, masked ? random.nextInt() : 0, payload.length, payload);
        sent.add(frame);
        wire.writeBytes(encode(frame));
      }
      byte[] bytes = wire.toByteArray();
      Recorder recorder = new Recorder();
      FrameReader reader = new FrameReader();
      for (int at = 0; at < bytes.length; ) {
        int n = Math.min(bytes.length - at, 1 + random.nextInt(random.nextBoolean() ? 3 : 40_000));
        reader.read(Unpooled.wrappedBuffer(bytes, at, n), recorder);
        at += n;
      }
      assertEquals(sent.size(), recorder.frames.size(), "round " + round + ": every frame is found once");
      for (int i = 0; i < sent.size(); i++) {
        Seen expected = sent.get(i);
        Seen actual = recorder.frames.get(i);
        String which = "round " + round + ", frame " + i;
        assertEquals(expected.opcode(), actual.opcode(), which);
        assertEquals(expected.fin(), actual.fin(), which);
        assertEquals(expected.rsv(), actual.rsv(), which);
        assertEquals(expected.masked(), actual.masked(), which);
        assertEquals(expected.mask(), actual.mask(), which);
        assertEquals(expected.length(), actual.length(), which);
        assertArrayEquals(expected.payload(), actual.payload(), which);
      }
    }
  }

  @Test
  void aLengthOfTwoToTheSixtyThirdIsReportedAsInvalid() {
    Recorder recorder = new Recorder();
    byte[] header = {(byte) 0x82, (byte) (0x80 | 127), (byte) 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
    new FrameReader().read(Unpooled.wrappedBuffer(header), recorder);
    assertEquals(-1, recorder.header.length(), "a length with its top bit set is not a length");
  }

  @Test
  void readingStopsWhenTheHandlerSaysSo() {
    List<Byte> opcodes = new ArrayList<>();
    FrameReader.Handler stopAfterFirst =
        new FrameReader.Handler() {
          @Override
          public boolean onHeader(byte opcode, boolean fin, int rsv, boolean masked, int mask, long length) {
            opcodes.add(opcode);
            return true;
          }

          @Override
          public boolean onPayload(ByteBuf bytes, int start, int length, boolean last) {
            return false;
          }
        };
    byte[] twoFrames = {(byte) 0x81, 0x01, 'a', (byte) 0x82, 0x01, 'b'};
    assertFalse(new FrameReader().read(Unpooled.wrappedBuffer(twoFrames), stopAfterFirst));
    assertEquals(List.of((byte) 1), opcodes, "nothing after the frame the handler stopped at is read");
  }
}
