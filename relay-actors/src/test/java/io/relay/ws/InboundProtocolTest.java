package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.relay.memory.MemoryBudget;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** What a client sees of the server reading its frames, section by section of RFC 6455. */
class InboundProtocolTest {
  private static final int LIMIT = 1 << 20;

  /** What the protocol told its listener, in order. */
  private static class Heard implements InboundProtocol.Listener {
    final List<String> events = new ArrayList<>();
    final List<byte[]> messages = new ArrayList<>();
    /** How many of the messages came in the frame they are relayed in. */
    int frames;

    @Override
    public void onMessage(byte opcode, byte[] bytes, int start, int size) {
      events.add((opcode == WsFrames.TEXT ? "text " : "binary ") + size);
      messages.add(bytes == null ? null : Arrays.copyOfRange(bytes, start, start + size));
    }

    /** Heard as a message: the frame's payload, copied out before the frame is let go of. */
    @Override
    public void onFrame(WsFrames.Frame frame) {
      frames++;
      try {
        onMessage(frame.opcode(), ByteBufUtil.getBytes(frame.payload()), 0, frame.payloadLength());
      } finally {
        frame.release();
      }
    }

    @Override
    public void onPing(byte[] payload) {
      events.add("ping " + new String(payload, StandardCharsets.UTF_8));
    }

    @Override
    public void onClose(CloseFrame close) {
      events.add("close " + close.code());
    }

    @Override
    public void onViolation(int closeCode, String reason) {
      events.add("fail " + closeCode);
    }
  }

  private static Heard read(ClientFrames frames) {
    return read(frames, true);
  }

  private static Heard read(ClientFrames frames, boolean keep) {
    Heard heard = new Heard();
    byte[] bytes = frames.bytes();
    new InboundProtocol(heard, keep, LIMIT, MemoryBudget.unlimited()).read(Unpooled.wrappedBuffer(bytes));
    return heard;
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  @Nested
  class Section5_1_Masking {
    @Test
    void anUnmaskedFrameFailsTheConnectionWith1002() {
      assertEquals(List.of("fail 1002"), read(new ClientFrames().frame(WsFrames.TEXT, true, 0, false, utf8("hi"))).events);
    }

    @Test
    void maskedPayloadsArriveUnmasked() {
      Heard heard = read(new ClientFrames().text("hello"));
      assertArrayEquals(utf8("hello"), heard.messages.get(0));
    }
  }

  @Nested
  class Section5_2_BaseFraming {
    @Test
    void reservedBitsFailTheConnectionWith1002() {
      for (int rsv = 1; rsv < 8; rsv++) {
        Heard heard = read(new ClientFrames().frame(WsFrames.TEXT, true, rsv, true, utf8("x")));
        assertEquals(List.of("fail 1002"), heard.events, "RSV " + rsv);
      }
    }

    @Test
    void reservedOpcodesFailTheConnectionWith1002() {
      for (int opcode : new int[] {3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF}) {
        Heard heard = read(new ClientFrames().frame(opcode, true, new byte[0]));
        assertEquals(List.of("fail 1002"), heard.events, "opcode " + opcode);
      }
    }

    @Test
    void aLengthWithItsMostSignificantBitSetFailsWith1002() {
      Heard heard = read(new ClientFrames().raw(0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4));
      assertEquals(List.of("fail 1002"), heard.events);
    }

    @Test
    void everyLengthEncodingArrivesWhole() {
      for (int size : new int[] {0, 125, 126, 65_535, 65_536, 300_000}) {
        byte[] payload = new byte[size];
        new Random(size).nextBytes(payload);
        Heard heard = read(new ClientFrames().frame(WsFrames.BINARY, true, payload));
        assertArrayEquals(payload, heard.messages.get(0), size + " bytes");
      }
    }

    @Test
    void framesSplitAtEveryByteBoundaryReadTheSame() {
      byte[] bytes = new ClientFrames().text("one").frame(WsFrames.PING, true, utf8("p")).frame(WsFrames.BINARY, false, new byte[300]).frame(WsFrames.CONTINUATION, true, new byte[3]).bytes();
      for (int split = 0; split <= bytes.length; split++) {
        Heard heard = new Heard();
        InboundProtocol protocol = new InboundProtocol(heard, true, LIMIT, MemoryBudget.unlimited());
        protocol.read(Unpooled.wrappedBuffer(bytes, 0, split));
        protocol.read(Unpooled.wrappedBuffer(bytes, split, bytes.length - split));
        assertEquals(List.of("text 3", "ping p", "binary 303"), heard.events, "split at " + split);
      }
    }
  }

  @Nested
  class Section5_4_Fragmentation {
    @Test
    void fragmentsWithControlFramesBetweenThemArriveAsOneMessage() {
      Heard heard =
          read(new ClientFrames()
              .frame(WsFrames.TEXT, false, utf8("frag"))
              .frame(WsFrames.PING, true, utf8("between"))
              .frame(WsFrames.CONTINUATION, false, utf8("men"))
              .frame(WsFrames.CONTINUATION, true, utf8("ts")));
      assertEquals(List.of("ping between", "text 9"), heard.events);
      assertArrayEquals(utf8("fragments"), heard.messages.get(0));
    }

    @Test
    void aContinuationOutsideAMessageFailsWith1002() {
      assertEquals(List.of("fail 1002"), read(new ClientFrames().frame(WsFrames.CONTINUATION, true, utf8("x"))).events);
    }

    @Test
    void aNewMessageInsideAFragmentedOneFailsWith1002() {
      Heard heard = read(new ClientFrames().frame(WsFrames.TEXT, false, utf8("a")).frame(WsFrames.TEXT, true, utf8("b")));
      assertEquals(List.of("fail 1002"), heard.events);
    }
  }

  @Nested
  class Section5_5_ControlFrames {
    @Test
    void aFragmentedControlFrameFailsWith1002() {
      assertEquals(List.of("fail 1002"), read(new ClientFrames().frame(WsFrames.PING, false, utf8("x"))).events);
    }

    @Test
    void aControlFrameLongerThan125BytesFailsWith1002() {
      assertEquals(List.of("fail 1002"), read(new ClientFrames().frame(WsFrames.PING, true, new byte[126])).events);
      assertEquals(List.of("ping " + "x".repeat(125)), read(new ClientFrames().frame(WsFrames.PING, true, utf8("x".repeat(125)))).events);
    }

    @Test
    void everyPingIsHeardInOrder() {
      ClientFrames frames = new ClientFrames();
      for (int i = 0; i < 10; i++) {
        frames.frame(WsFrames.PING, true, utf8("p" + i));
      }
      Heard heard = read(frames);
      assertEquals(List.of("ping p0", "ping p1", "ping p2", "ping p3", "ping p4", "ping p5", "ping p6", "ping p7", "ping p8", "ping p9"), heard.events);
    }

    @Test
    void anUnsolicitedPongIsIgnored() {
      assertEquals(List.of("text 1"), read(new ClientFrames().frame(WsFrames.PONG, true, utf8("x")).text("y")).events);
    }

    @Test
    void aCloseEndsReadingAndLaterFramesAreNotRead() {
      Heard heard = read(new ClientFrames().close(1000, new byte[0]).text("after"));
      assertEquals(List.of("close 1000"), heard.events);
    }
  }

  @Nested
  class Section7_4_CloseCodes {
    @Test
    void anInvalidCloseCodeFailsWith1002() {
      for (int code : new int[] {0, 999, 1004, 1005, 1006, 1016, 1100, 2000, 2999, 5000, 65535}) {
        assertEquals(List.of("fail 1002"), read(new ClientFrames().close(code, new byte[0])).events, "code " + code);
      }
    }

    @Test
    void aOneByteCloseBodyFailsWith1002() {
      assertEquals(List.of("fail 1002"), read(new ClientFrames().frame(WsFrames.CLOSE, true, new byte[] {3})).events);
    }

    @Test
    void aCloseReasonThatIsNotUtf8FailsWith1002() {
      assertEquals(List.of("fail 1002"), read(new ClientFrames().close(1000, new byte[] {(byte) 0xC0, (byte) 0xAF})).events);
    }

    @Test
    void anEmptyCloseIsACloseWithoutCode() {
      assertEquals(List.of("close 1005"), read(new ClientFrames().frame(WsFrames.CLOSE, true, new byte[0])).events);
    }
  }

  @Nested
  class Section8_1_Utf8 {
    @Test
    void validTextInPiecesSplitInsideCodePointsArrives() {
      byte[] text = utf8("κόσμε 🎉");
      Heard heard =
          read(new ClientFrames()
              .frame(WsFrames.TEXT, false, Arrays.copyOfRange(text, 0, 1))
              .frame(WsFrames.CONTINUATION, false, Arrays.copyOfRange(text, 1, 12))
              .frame(WsFrames.CONTINUATION, true, Arrays.copyOfRange(text, 12, text.length)));
      assertArrayEquals(text, heard.messages.get(0));
    }

    @Test
    void invalidTextFailsWith1007AndTheMessageIsNotHeard() {
      assertEquals(List.of("fail 1007"), read(new ClientFrames().frame(WsFrames.TEXT, true, new byte[] {'a', (byte) 0xED, (byte) 0xA0, (byte) 0x80})).events);
    }

    @Test
    void invalidTextFailsAtItsFirstBadByteBeforeTheMessageEnds() {
      Heard heard = read(new ClientFrames().frame(WsFrames.TEXT, false, new byte[] {'a', (byte) 0xF5}));
      assertEquals(List.of("fail 1007"), heard.events, "no need to wait for the rest of the message");
    }

    @Test
    void invalidTextFailsInsideOneFrameBeforeItEnds() {
      byte[] bytes = new ClientFrames().frame(WsFrames.TEXT, true, new byte[] {'a', 'b', (byte) 0xF5, 'c', 'd', 'e'}).bytes();
      Heard heard = new Heard();
      new InboundProtocol(heard, true, LIMIT, MemoryBudget.unlimited()).read(Unpooled.wrappedBuffer(bytes, 0, bytes.length - 2));
      assertEquals(List.of("fail 1007"), heard.events);
    }

    @Test
    void textEndingInsideACodePointFailsWith1007() {
      assertEquals(List.of("fail 1007"), read(new ClientFrames().frame(WsFrames.TEXT, true, new byte[] {'a', (byte) 0xE2, (byte) 0x82})).events);
    }

    @Test
    void textIsCheckedEvenWhenMessagesAreNotKept() {
      assertEquals(List.of("fail 1007"), read(new ClientFrames().frame(WsFrames.TEXT, true, new byte[] {(byte) 0xC0, (byte) 0xAF}), false).events);
      Heard heard = read(new ClientFrames().text("fine"), false);
      assertEquals(List.of("text 4"), heard.events);
      assertEquals(null, heard.messages.get(0), "only the size of a message not kept is heard");
    }

    @Test
    void binaryMessagesAreNeverInspected() {
      byte[] notText = {(byte) 0xC0, (byte) 0xAF, (byte) 0xFF};
      assertArrayEquals(notText, read(new ClientFrames().frame(WsFrames.BINARY, true, notText)).messages.get(0));
    }
  }

  @Nested
  class SizeLimit {
    @Test
    void aMessageLargerThanTheLimitFailsWith1009AtItsHeader() {
      Heard heard = new Heard();
      InboundProtocol protocol = new InboundProtocol(heard, true, 100, MemoryBudget.unlimited());
      byte[] header = new ClientFrames().raw(0x82, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4).bytes();
      protocol.read(Unpooled.wrappedBuffer(header));
      protocol.read(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, new byte[] {1}).bytes()));
      assertEquals(List.of("fail 1009"), heard.events, "reading ends: a frame after it is not read");
    }

    @Test
    void aMessageThatNeedsMemoryTheNodesBudgetHasNotFailsWith1013() {
      Heard heard = new Heard();
      MemoryBudget budget = new MemoryBudget(100_000, (holder, held) -> { });
      byte[] bytes = new ClientFrames().frame(WsFrames.BINARY, false, new byte[70_000]).frame(WsFrames.CONTINUATION, true, new byte[70_000]).bytes();
      InboundProtocol protocol = new InboundProtocol(heard, true, LIMIT, budget);
      for (int at = 0; at < bytes.length; at += 1000) { // the reads after the failure are not read
        protocol.read(Unpooled.wrappedBuffer(bytes, at, Math.min(bytes.length, at + 1000) - at));
      }
      assertEquals(List.of("fail 1013"), heard.events, "a message arriving in pieces grows only within the budget");
      assertEquals(0, budget.used(), "what it held is given back");
    }

    @Test
    void aFrameCutAcrossReadsThatTheNodesBudgetHasNoRoomForFailsWith1013() {
      Heard heard = new Heard();
      MemoryBudget budget = new MemoryBudget(50_000, (holder, held) -> { });
      byte[] bytes = new ClientFrames().frame(WsFrames.BINARY, true, new byte[60_000]).bytes();
      InboundProtocol protocol = new InboundProtocol(heard, true, LIMIT, budget);
      for (int at = 0; at < bytes.length; at += 1000) { // the reads after the failure are not read
        protocol.read(Unpooled.wrappedBuffer(bytes, at, Math.min(bytes.length, at + 1000) - at));
      }
      assertEquals(List.of("fail 1013"), heard.events);
      assertEquals(0, budget.used(), "nothing is held");
    }

    @Test
    void fragmentsCountTowardsTheLimitTogether() {
      Heard heard = new Heard();
      byte[] bytes = new ClientFrames().frame(WsFrames.BINARY, false, new byte[60]).frame(WsFrames.CONTINUATION, true, new byte[41]).bytes();
      new InboundProtocol(heard, true, 100, MemoryBudget.unlimited()).read(Unpooled.wrappedBuffer(bytes));
      assertEquals(List.of("fail 1009"), heard.events);
    }

    @Test
    void aContinuationWhoseLengthWouldOverflowTheMessagesSizeFailsWith1009AtItsHeader() {
      Heard heard = new Heard();
      byte[] bytes =
          new ClientFrames()
              .frame(WsFrames.BINARY, false, new byte[1])
              .raw(0x80, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4) // the largest 64-bit length
              .bytes();
      new InboundProtocol(heard, true, 100, MemoryBudget.unlimited()).read(Unpooled.wrappedBuffer(bytes));
      assertEquals(List.of("fail 1009"), heard.events);
    }
  }

  /** An allocator that keeps the direct buffers it makes, for reads that are its heap buffers. */
  private static final class Buffers extends AbstractByteBufAllocator {
    final List<ByteBuf> made = new ArrayList<>();

    ByteBuf read(byte[] bytes, int start, int length) {
      return heapBuffer(length).writeBytes(bytes, start, length);
    }

    @Override
    protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
      return new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity);
    }

    @Override
    protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
      ByteBuf buffer = new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity);
      made.add(buffer);
      return buffer;
    }

    @Override
    public boolean isDirectBufferPooled() {
      return false;
    }
  }

  /** Reads are the channel's pooled buffers: messages are copied out of them, never kept there. */
  @Nested
  class Reads {
    /** Each message heard, as the protocol handed it on: the array itself and where its payload is. */
    private final List<Object[]> handedOn = new ArrayList<>();

    private InboundProtocol protocol() {
      Heard heard = new Heard() {
        @Override
        public void onMessage(byte opcode, byte[] bytes, int start, int size) {
          super.onMessage(opcode, bytes, start, size);
          handedOn.add(new Object[] {bytes, start, size});
        }
      };
      return new InboundProtocol(heard, true, LIMIT, MemoryBudget.unlimited());
    }

    @Test
    void eachMessageOfOneReadGetsAnArrayOfItsOwnAndTheReadIsLeftAsItWas() {
      ClientFrames frames = new ClientFrames();
      for (int i = 0; i < 4; i++) {
        frames.frame(WsFrames.BINARY, true, new byte[] {(byte) i, 1, 2});
      }
      byte[] large = new byte[20_000];
      Arrays.fill(large, (byte) 7);
      frames.frame(WsFrames.BINARY, true, large);
      byte[] wire = frames.bytes();
      byte[] before = wire.clone();
      ByteBuf read = Unpooled.wrappedBuffer(wire);
      InboundProtocol protocol = protocol();
      protocol.read(read);
      assertEquals(0, read.readableBytes(), "the whole read is consumed");
      assertArrayEquals(before, wire, "the read's bytes are never written");
      assertEquals(5, handedOn.size());
      for (int i = 0; i < 4; i++) {
        byte[] bytes = (byte[]) handedOn.get(i)[0];
        int start = (int) handedOn.get(i)[1];
        assertArrayEquals(new byte[] {(byte) i, 1, 2}, Arrays.copyOfRange(bytes, start, start + 3));
        assertEquals(3, bytes.length, "an array of the message's size");
      }
      byte[] last = (byte[]) handedOn.get(4)[0];
      int start = (int) handedOn.get(4)[1];
      assertArrayEquals(large, Arrays.copyOfRange(last, start, start + large.length));
    }

    @Test
    void aFrameCutAcrossReadsIsOneMessageOnceItsRestArrives() {
      byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, new byte[40_000]).bytes();
      InboundProtocol protocol = protocol();
      protocol.read(Unpooled.wrappedBuffer(wire, 0, 10_000));
      assertEquals(0, handedOn.size(), "nothing yet");
      protocol.read(Unpooled.wrappedBuffer(wire, 10_000, wire.length - 10_000));
      assertEquals(1, handedOn.size(), "the message, once the rest of its frame arrived");
    }

    @Test
    void aBinaryFrameCutAnywhereIsUnmaskedIntoTheFrameItIsRelayedInAndCountedUntilHandedOn() {
      byte[] payload = new byte[1_001];
      new Random(5).nextBytes(payload);
      byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, payload).bytes();
      int header = wire.length - payload.length;
      for (int split = header + 1; split < wire.length; split++) {
        Heard heard = new Heard();
        MemoryBudget budget = new MemoryBudget(1 << 20, (holder, held) -> { });
        InboundProtocol protocol = new InboundProtocol(heard, true, LIMIT, budget);
        protocol.read(Unpooled.wrappedBuffer(wire, 0, split));
        assertEquals(List.of(), heard.events, "nothing yet, split at " + split);
        assertEquals(payload.length, budget.used(), "the whole payload counts from the first piece: split at " + split);
        assertEquals(budget.used(), protocol.reservedBytes());
        protocol.read(Unpooled.wrappedBuffer(wire, split, wire.length - split));
        assertArrayEquals(payload, heard.messages.get(0), "split at " + split);
        assertEquals(1, heard.frames, "handed on in its frame: split at " + split);
        assertEquals(0, budget.used(), "given back once handed on: split at " + split);
      }
    }

    @Test
    void aFrameAtMost64KiBLongerThanItsFirstPieceIsBuiltInItsFrameFromThatPiece() {
      byte[] payload = new byte[70_000];
      new Random(7).nextBytes(payload);
      byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, payload).bytes();
      Heard heard = new Heard();
      InboundProtocol protocol = new InboundProtocol(heard, true, LIMIT, MemoryBudget.unlimited());
      int first = wire.length - payload.length + 70_000 - 64 * 1024; // the first piece leaves 64 KiB to come
      protocol.read(Unpooled.wrappedBuffer(wire, 0, first));
      protocol.read(Unpooled.wrappedBuffer(wire, first, wire.length - first));
      assertArrayEquals(payload, heard.messages.get(0));
      assertEquals(1, heard.frames, "built in its frame");
    }

    @Test
    void aFrameMoreThan64KiBLongerThanItsFirstPieceGrowsInAnArrayAsItsBytesArrive() {
      byte[] payload = new byte[200_000];
      new Random(6).nextBytes(payload);
      byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, payload).bytes();
      Heard heard = new Heard();
      MemoryBudget budget = new MemoryBudget(1 << 20, (holder, held) -> { });
      InboundProtocol protocol = new InboundProtocol(heard, true, LIMIT, budget);
      protocol.read(Unpooled.wrappedBuffer(wire, 0, 1_000));
      assertTrue(budget.used() <= 1_000 + 64 * 1024, "held no more than 64 KiB ahead of what arrived: " + budget.used());
      for (int at = 1_000; at < wire.length; at += 1_000) {
        protocol.read(Unpooled.wrappedBuffer(wire, at, Math.min(wire.length, at + 1_000) - at));
      }
      assertArrayEquals(payload, heard.messages.get(0));
      assertEquals(0, heard.frames, "assembled in an array");
      assertEquals(0, budget.used());
    }

    @Test
    void aFrameBeingBuiltIsLetGoOfWhenTheConnectionEndsOrStopsKeepingMessages() {
      byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, new byte[1_001]).bytes();
      MemoryBudget budget = new MemoryBudget(1 << 20, (holder, held) -> { });
      Buffers buffers = new Buffers();
      InboundProtocol ended = new InboundProtocol(new Heard(), true, LIMIT, budget);
      ended.read(buffers.read(wire, 0, 500));
      assertTrue(budget.used() > 0, "the frame being built counts");
      assertEquals(1, buffers.made.size(), "one buffer, the frame being built");
      ended.release();
      assertEquals(0, budget.used(), "given back when the connection ends");
      assertEquals(0, buffers.made.get(0).refCnt(), "the frame being built is freed when the connection ends");

      Heard heard = new Heard();
      InboundProtocol closing = new InboundProtocol(heard, true, LIMIT, budget);
      closing.read(buffers.read(wire, 0, 500));
      closing.discardMessages();
      assertEquals(0, budget.used(), "given back when messages are no longer kept");
      assertEquals(0, buffers.made.get(1).refCnt(), "the frame being built is freed when messages are no longer kept");
      closing.read(buffers.read(wire, 500, wire.length - 500));
      assertEquals(List.of("binary 1001"), heard.events, "the message is still counted whole");
      assertEquals(0, heard.frames);
    }
  }
}
