package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.relay.RelaySettings;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.TestClusterConfig;
import io.relay.ws.ClientFrames;
import io.relay.ws.CloseCodes;
import io.relay.ws.WsFrames;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A connection's handler on its channel: a writer's messages reach every other reader of the
 * topic whole and in order, each reader's channel writes the frame's one buffer, and every holder
 * lets go (the budget back at zero, the buffers back in their pool). Channels are Netty's
 * embedded channels: each runs its tasks when the test says so, as its event loop would.
 */
class ConnectionHandlerTest {
  private static final ActorTestKit KIT = ActorTestKit.create("connection-handler", TestClusterConfig.with(Map.of()));

  private final RelayMetrics metrics = new RelayMetrics();
  private final MemoryBudget budget = new MemoryBudget(1 << 30, (holder, held) -> {});
  private final RelaySettings settings = RelaySettings.create(KIT.system().settings().config());
  private final Room room = new Room(metrics, budget);

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  private EmbeddedChannel channel(Connection connection) {
    connection.joined(room, null);
    return new EmbeddedChannel(new ConnectionHandler(connection, settings, metrics, budget));
  }

  /** A writer's channel and a reader's, the topic's two members: {writer, reader}. */
  private EmbeddedChannel[] writerAndReader() {
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    Connection reader = TestConnections.connection(metrics.readerFramesDiscarded, "t", "r", Instant.now().plusSeconds(3600), "read");
    EmbeddedChannel[] channels = {channel(writer), channel(reader)};
    room.setReaders(new Connection[] {writer, reader});
    return channels;
  }

  @Test
  void messagesOfOneReadReachEveryOtherReaderWholeAndInOrderAndEveryHolderLetsGo() {
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    Connection reader1 = TestConnections.connection("t", "r1", "read");
    Connection reader2 = TestConnections.connection("t", "r2", "read");
    EmbeddedChannel writerChannel = channel(writer);
    EmbeddedChannel readerChannel1 = channel(reader1);
    EmbeddedChannel readerChannel2 = channel(reader2);
    room.setReaders(new Connection[] {writer, reader1, reader2});

    byte[] first = payload(20_000, 1);
    byte[] second = payload(3_000, 2);
    byte[] third = payload(10, 3);
    byte[] wire =
        new ClientFrames()
            .frame(WsFrames.BINARY, true, first)
            .frame(WsFrames.BINARY, true, second)
            .frame(WsFrames.BINARY, true, third)
            .bytes();
    writerChannel.writeInbound(Unpooled.wrappedBuffer(wire));
    assertTrue(budget.used() > 0, "the readers' queues hold the messages until their channels write them");

    for (EmbeddedChannel reader : new EmbeddedChannel[] {readerChannel1, readerChannel2}) {
      reader.runPendingTasks();
      assertArrayEquals(first, payloadOf(reader.readOutbound()));
      assertArrayEquals(second, payloadOf(reader.readOutbound()));
      assertArrayEquals(third, payloadOf(reader.readOutbound()));
      assertNull(reader.readOutbound(), "three messages, three frames");
    }
    assertNull(writerChannel.readOutbound(), "the writer does not get its own messages");
    assertEquals(0, budget.used(), "every reader's write ended: the budget is free");
    assertEquals(3, reader1.stats().tx().count());
  }

  @Test
  void aConnectionItsTopicDroppedBeforeItAttachedEndsAtOnceAndRelaysNothing() {
    Connection reader = TestConnections.connection("t", "r", "read");
    EmbeddedChannel readerChannel = channel(reader);
    room.setReaders(new Connection[] {reader});
    // its upgrade outlasted relay.attach-timeout: the topic forgot it, disposing its queue
    Connection late = TestConnections.connection("t", "late", "read", "write");
    late.joined(room, null);
    late.outbound().dispose();
    ConnectionHandler handler = new ConnectionHandler(late, settings, metrics, budget);
    EmbeddedChannel lateChannel = new EmbeddedChannel(handler);
    assertFalse(lateChannel.isActive(), "the connection ended");
    // what the client sent with its upgrade request, which the upgrade hands on right after adding
    // the handler, before the closed channel leaves the pipeline (at once on an embedded channel)
    ByteBuf early = Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, payload(100, 5)).bytes());
    handler.channelRead(null, early);
    assertEquals(0, early.refCnt(), "let go of, unread");
    readerChannel.runPendingTasks();
    assertNull(readerChannel.readOutbound(), "nothing it sent reached the topic's reader");
    assertEquals(0, budget.used(), "nothing held");
  }

  @Test
  void aConnectionItsTopicDropsAsItAttachesEndsOnItsLoop() {
    Connection late = TestConnections.connection("t", "late", "read", "write");
    EmbeddedChannel lateChannel = channel(late);
    assertTrue(lateChannel.isActive());
    late.outbound().dispose(); // the topic's attach deadline, racing the attach
    lateChannel.runPendingTasks();
    assertFalse(lateChannel.isActive(), "the connection ended once its loop found it dropped");
  }

  @Test
  void aMessageCutAcrossThreePooledReadsReachesTheReaderAsOneServerFrame() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    EmbeddedChannel readerChannel = channels[1];

    byte[] payload = payload(60_000, 4);
    byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, payload).bytes();
    int[] cuts = {0, 3, 30_001, wire.length}; // inside the header, then inside the payload
    for (int i = 0; i + 1 < cuts.length; i++) {
      writerChannel.writeInbound(PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(wire, cuts[i], cuts[i + 1] - cuts[i]));
    }

    readerChannel.runPendingTasks();
    ByteBuf frame = readerChannel.readOutbound();
    assertNotNull(frame, "the message");
    try {
      byte[] expected = new byte[4 + payload.length];
      expected[0] = (byte) (0x80 | WsFrames.BINARY);
      expected[1] = 126;
      expected[2] = (byte) (payload.length >>> 8);
      expected[3] = (byte) payload.length;
      System.arraycopy(payload, 0, expected, 4, payload.length);
      assertArrayEquals(expected, ByteBufUtil.getBytes(frame), "one server frame: its header, then the payload unmasked");
    } finally {
      frame.release();
    }
    assertNull(readerChannel.readOutbound(), "one message, one frame");
    assertEquals(0, budget.used(), "the reader's write ended: the budget is free");
  }

  /** A reader's channel whose connection the server has closed with 4003: its close frame read. */
  private EmbeddedChannel closedByTheServer() {
    Connection reader = TestConnections.connection("t", "r", "read");
    EmbeddedChannel channel = channel(reader);
    reader.close(CloseCodes.BOOKING_DENIED, "booking denied");
    channel.runPendingTasks();
    ByteBuf close = channel.readOutbound();
    assertNotNull(close, "a close frame");
    assertEquals(0x80 | WsFrames.CLOSE, close.getUnsignedByte(0));
    assertEquals(CloseCodes.BOOKING_DENIED, close.getUnsignedShort(2));
    close.release();
    return channel;
  }

  @Test
  void aReaderTheServerClosesGetsTheCloseFrameAndItsChannelCloses() {
    EmbeddedChannel channel = closedByTheServer();
    assertTrue(channel.isActive(), "the server waits for the client's close");
    channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().close(CloseCodes.BOOKING_DENIED, new byte[0]).bytes()));
    assertFalse(channel.isActive(), "the handshake is complete: the connection ends");
    channel.advanceTimeBy(settings.closeTimeout().toNanos(), TimeUnit.NANOSECONDS);
    channel.runScheduledPendingTasks();
    assertEquals(0.0, metrics.closeTimeouts.get(), "a handshake completed in time is not a close timeout");
  }

  @Test
  void aWriterTheServerClosesRelaysNothingMoreWhileItsFullChannelKeepsTheCloseWaiting() {
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    Connection reader = TestConnections.connection("t", "r", "read");
    EmbeddedChannel writerChannel = channel(writer);
    EmbeddedChannel readerChannel = channel(reader);
    room.setReaders(new Connection[] {writer, reader});
    // a client that sends but does not read: its channel takes nothing more, the close included
    writable(writerChannel, false);
    writer.close(CloseCodes.BOOKING_DENIED, "booking denied");
    writerChannel.runPendingTasks();
    assertNull(writerChannel.readOutbound(), "the close waits for room in the channel");
    writerChannel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, payload(100, 6)).bytes()));
    readerChannel.runPendingTasks();
    assertNull(readerChannel.readOutbound(), "nothing the denied writer sent after its close was relayed");
    assertEquals(1.0, metrics.framesDiscarded.labelValues("writer").get(), "its message, counted as a close's");
    assertEquals(0, budget.used(), "nothing held for it");
  }

  @Test
  void aClientThatDoesNotAnswerTheServersCloseIsResetAtTheCloseTimeoutAndCounted() {
    EmbeddedChannel channel = closedByTheServer();
    channel.advanceTimeBy(settings.closeTimeout().toNanos() / 2, TimeUnit.NANOSECONDS);
    channel.runScheduledPendingTasks();
    assertTrue(channel.isActive(), "the client has the close timeout to answer");
    channel.advanceTimeBy(settings.closeTimeout().toNanos() / 2, TimeUnit.NANOSECONDS);
    channel.runScheduledPendingTasks();
    assertFalse(channel.isActive(), "no answer within the close timeout: reset");
    assertEquals(1.0, metrics.closeTimeouts.get());
  }

  @Test
  void aReaderWhoseQueueIsFullLosesTheOldestMessagesCountedAndGetsTheNewestInOrder() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    EmbeddedChannel readerChannel = channels[1];
    writable(readerChannel, false); // a client that stopped reading
    double dropped = metrics.framesDropped.get();
    ClientFrames frames = new ClientFrames();
    for (int i = 0; i < 67; i++) {
      frames.frame(WsFrames.BINARY, true, payload(100, i));
    }
    writerChannel.writeInbound(Unpooled.wrappedBuffer(frames.bytes()));
    assertEquals(dropped + 3, metrics.framesDropped.get(), "67 messages for a queue of 64: the 3 oldest dropped and counted");
    writable(readerChannel, true); // it reads again
    readerChannel.runPendingTasks();
    for (int i = 3; i < 67; i++) {
      assertArrayEquals(payload(100, i), payloadOf(readerChannel.readOutbound()), "message " + i + ", the newest 64 in order");
    }
    assertNull(readerChannel.readOutbound(), "nothing more");
    readerChannel.finishAndReleaseAll();
    writerChannel.finishAndReleaseAll();
  }

  @Test
  void aReaderThatTakesNothingOfWhatADrainLetsGoFirstLosesItAtTheCloseTimeoutAndIsResetCounted() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    EmbeddedChannel readerChannel = channels[1];
    writable(readerChannel, false); // a client that stopped reading
    writerChannel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, payload(1_000, 1)).frame(WsFrames.BINARY, true, payload(1_000, 2)).bytes()));
    double dropped = metrics.framesDropped.get();
    room.readers()[1].close(CloseCodes.GOING_AWAY, "node draining"); // lets the two queued messages go first
    readerChannel.runPendingTasks();
    readerChannel.advanceTimeBy(settings.closeTimeout().toNanos() / 2, TimeUnit.NANOSECONDS);
    readerChannel.runScheduledPendingTasks();
    assertTrue(readerChannel.isActive(), "the reader has the close timeout to take what was queued");
    assertEquals(dropped, metrics.framesDropped.get(), "nothing dropped yet");
    readerChannel.advanceTimeBy(settings.closeTimeout().toNanos() / 2, TimeUnit.NANOSECONDS);
    readerChannel.runScheduledPendingTasks();
    assertEquals(dropped + 2, metrics.framesDropped.get(), "the two messages it did not take are counted as dropped");
    assertFalse(readerChannel.isActive(), "a channel that cannot take even the close is reset");
    assertEquals(1.0, metrics.closeTimeouts.get(), "and counted as a close timeout");
    assertNull(readerChannel.readOutbound(), "nothing was written to it");
    assertEquals(0, budget.used(), "nothing is held for it");
    writerChannel.finishAndReleaseAll();
  }

  @Test
  void aReaderDeniedWhileADrainLetsWhatIsQueuedGoFirstGets4003NextAndNoneOfIt() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    EmbeddedChannel readerChannel = channels[1];
    Connection reader = room.readers()[1];
    writable(readerChannel, false); // a client slow to read
    writerChannel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, payload(1_000, 1)).frame(WsFrames.BINARY, true, payload(1_000, 2)).bytes()));
    reader.close(CloseCodes.GOING_AWAY, "node draining"); // lets the two queued messages go first
    readerChannel.runPendingTasks();
    reader.close(CloseCodes.BOOKING_DENIED, "booking denied"); // its booking is cancelled meanwhile
    writable(readerChannel, true);
    readerChannel.runPendingTasks();
    ByteBuf close = readerChannel.readOutbound();
    assertNotNull(close, "a close frame once the channel has room");
    assertEquals(0x80 | WsFrames.CLOSE, close.getUnsignedByte(0), "the close goes first: none of what the drain was letting go");
    assertEquals(CloseCodes.BOOKING_DENIED, close.getUnsignedShort(2));
    close.release();
    assertNull(readerChannel.readOutbound(), "nothing after the close");
    assertEquals(CloseCodes.BOOKING_DENIED, reader.closeCode(), "the connection is counted with the code it was sent");
    assertEquals(0, budget.used(), "nothing is held for it");
    readerChannel.finishAndReleaseAll();
    writerChannel.finishAndReleaseAll();
  }

  @Test
  void aWriterWhoseMessageTheBudgetHasNoRoomForIsClosedWith1013AndCountedAsShed() {
    MemoryBudget small = new MemoryBudget(50_000, (holder, held) -> {});
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    writer.joined(new Room(metrics, small), null);
    EmbeddedChannel channel = new EmbeddedChannel(new ConnectionHandler(writer, settings, metrics, small));
    byte[] wire = new ClientFrames().frame(WsFrames.BINARY, true, new byte[60_000]).bytes();
    channel.writeInbound(Unpooled.wrappedBuffer(wire, 0, 1000)); // a frame cut across reads, whole in the budget from its first piece
    channel.runPendingTasks();
    ByteBuf close = channel.readOutbound();
    assertNotNull(close, "the server's close");
    assertEquals(CloseCodes.TRY_AGAIN_LATER, close.getUnsignedShort(2));
    close.release();
    assertEquals(1.0, metrics.connectionsShed.get(), "closed to keep the node within its budget: counted as shed");
    assertEquals(0, small.used(), "nothing is held");
    channel.finishAndReleaseAll();
  }

  @Test
  void aWriterTheBudgetShedsForWantOfRoomForItsOwnMessageIsCountedOnce() {
    MemoryBudget small = new MemoryBudget(70_000, (holder, held) -> metrics.connectionsShed.inc()); // as the node counts
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    writer.joined(new Room(metrics, small), null);
    EmbeddedChannel channel = new EmbeddedChannel(new ConnectionHandler(writer, settings, metrics, small));
    byte[] wire = new ClientFrames().frame(WsFrames.BINARY, false, new byte[70_000]).frame(WsFrames.CONTINUATION, true, new byte[70_000]).bytes();
    for (int at = 0; at < wire.length && channel.isActive(); at += 1000) {
      channel.writeInbound(Unpooled.wrappedBuffer(wire, at, Math.min(wire.length, at + 1000) - at));
      channel.runPendingTasks();
    }
    assertEquals(1.0, metrics.connectionsShed.get(), "the biggest holder, shed by the budget and refused its message: one connection shed");
    channel.finishAndReleaseAll();
  }

  @Test
  void aWriterTheBudgetShedsForWantOfRoomForItsOwnMessageIsToldWhyWith1013() throws InterruptedException {
    // on a channel served by an event loop, as the relay port's are (an embedded channel runs the
    // queued drain when it is closed, which a socket does not)
    MemoryBudget small = new MemoryBudget(70_000, (holder, held) -> {});
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    writer.joined(new Room(metrics, small), null);
    TestConnections.Client client = TestConnections.run(new TopicActor.Joined(new ConnectionHandler(writer, settings, metrics, small)));
    client.send(new ClientFrames().frame(WsFrames.BINARY, false, new byte[70_000]).frame(WsFrames.CONTINUATION, true, new byte[70_000]).bytes());
    assertEquals(CloseCodes.TRY_AGAIN_LATER, client.nextCloseCode(), "the writer gets its close, not a reset");
  }

  @Test
  void aConnectionShedAsItsClientsCloseArrivesGetsIts1013Before() throws InterruptedException {
    // on a channel served by an event loop (an embedded channel runs its queued tasks inside a write)
    Connection reader = TestConnections.connection("t", "r", "read");
    reader.joined(room, null);
    ConnectionHandler handler = new ConnectionHandler(reader, settings, metrics, budget);
    TestConnections.Client client = TestConnections.run(new TopicActor.Joined(handler));
    byte[] close = new ClientFrames().close(CloseCodes.NORMAL, new byte[0]).bytes();
    Channel served = client.served;
    served.eventLoop().execute(
        () -> {
          handler.shed(); // its close is a task of this loop, queued now
          // the client's close, read by the loop right after that task
          served.eventLoop().execute(() -> served.pipeline().fireChannelRead(Unpooled.wrappedBuffer(close)).fireChannelReadComplete());
        });
    assertEquals(CloseCodes.TRY_AGAIN_LATER, client.nextCloseCode(), "the server's close, not a closed connection without one");
  }

  @Test
  void aConnectionShedWhileItsAnswerToTheClientsCloseIsOnItsWayKeepsTheClientsClose() {
    Connection reader = TestConnections.connection("t", "r", "read");
    reader.joined(room, null);
    ConnectionHandler handler = new ConnectionHandler(reader, settings, metrics, budget);
    List<Object> unwritten = new ArrayList<>();
    EmbeddedChannel channel = takingNothing(handler, unwritten);
    channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().close(CloseCodes.NORMAL, new byte[0]).bytes()));
    handler.shed();
    channel.runPendingTasks();
    assertEquals(0, reader.closeCode(), "the client closed it: no server close code");
    assertEquals(1, unwritten.size(), "the answer to the client's close, and no second close");
    unwritten.forEach(ReferenceCountUtil::release);
    channel.finishAndReleaseAll();
  }

  @Test
  void aServerCloseThatTheClientsCloseOvertakesNeverGoesOutAndIsNotCountedAsTheServers() {
    Connection reader = TestConnections.connection("t", "r", "read");
    EmbeddedChannel channel = channel(reader);
    reader.close(CloseCodes.BOOKING_DENIED, "booking denied"); // sent by a task of the channel's loop, not run yet
    // the client's close, read before that task runs
    channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().close(CloseCodes.NORMAL, new byte[0]).bytes()));
    ByteBuf answer = channel.readOutbound();
    assertEquals(CloseCodes.NORMAL, answer.getUnsignedShort(2), "the client's close is answered with its code");
    answer.release();
    assertNull(channel.readOutbound(), "the server's 4003 never goes out");
    assertEquals(0, reader.closeCode(), "so the connection counts as closed by its client, not under 4003");
    channel.finishAndReleaseAll();
  }

  @Test
  void aReaderWhoseCloseIsAnsweredIsSentNothingMoreAndWhatReachesItIsDiscardedNotHeld() {
    Connection writer = TestConnections.connection("t", "w", "read", "write");
    Connection reader = TestConnections.connection(metrics.readerFramesDiscarded, "t", "r", Instant.now().plusSeconds(3600), "read");
    EmbeddedChannel writerChannel = channel(writer);
    reader.joined(room, null);
    List<Object> unwritten = new ArrayList<>();
    EmbeddedChannel readerChannel = takingNothing(new ConnectionHandler(reader, settings, metrics, budget), unwritten);
    room.setReaders(new Connection[] {writer, reader});
    readerChannel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().close(CloseCodes.NORMAL, new byte[0]).bytes()));
    double dropped = metrics.framesDropped.get();
    double discarded = metrics.readerFramesDiscarded.get();
    ClientFrames frames = new ClientFrames();
    for (int i = 0; i < 67; i++) {
      frames.frame(WsFrames.BINARY, true, payload(100, i));
    }
    writerChannel.writeInbound(Unpooled.wrappedBuffer(frames.bytes()));
    readerChannel.runPendingTasks();
    assertEquals(1, unwritten.size(), "the answer to the client's close, and nothing after it");
    assertEquals(dropped, metrics.framesDropped.get(), "a reader that left is not a slow one: nothing counted as dropped");
    assertEquals(discarded + 67, metrics.readerFramesDiscarded.get(), "every message after its close, counted as a close's");
    assertEquals(0, budget.used(), "nothing held for a reader that left");
    unwritten.forEach(ReferenceCountUtil::release);
    readerChannel.finishAndReleaseAll();
    writerChannel.finishAndReleaseAll();
  }

  @Test
  void aClientThatBreaksARuleIsClosedWithItsCodeAndNothingItSentIsRelayed() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    EmbeddedChannel readerChannel = channels[1];
    byte[] unmasked = {(byte) 0x82, 0x01, 0x07};
    writerChannel.writeInbound(Unpooled.wrappedBuffer(unmasked));
    writerChannel.runPendingTasks();
    ByteBuf close = writerChannel.readOutbound();
    assertNotNull(close, "the server's close");
    assertEquals(CloseCodes.PROTOCOL_ERROR, close.getUnsignedShort(2));
    close.release();
    readerChannel.runPendingTasks();
    assertNull(readerChannel.readOutbound(), "nothing relayed");
  }

  @Test
  void aClientThatBreaksARuleWhileTheServerClosesGracefullyGetsTheCloseNextWithoutWhatWasQueued() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    Connection reader = room.readers()[1];
    writerChannel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, payload(1_000, 1)).frame(WsFrames.BINARY, true, payload(1_000, 2)).bytes()));
    double discarded = metrics.framesDiscarded.labelValues("reader").get();
    reader.close(CloseCodes.GOING_AWAY, "node draining"); // lets the two queued messages go first
    EmbeddedChannel readerChannel = channels[1];
    readerChannel.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0x82, 0x01, 0x07})); // unmasked: a protocol error
    ByteBuf close = readerChannel.readOutbound();
    assertNotNull(close, "a close frame");
    assertEquals(0x80 | WsFrames.CLOSE, close.getUnsignedByte(0), "the close goes out next, before what was queued");
    assertEquals(CloseCodes.GOING_AWAY, close.getUnsignedShort(2), "the server's close, asked for first, keeps its code");
    close.release();
    assertNull(readerChannel.readOutbound(), "nothing after the close");
    assertEquals(discarded + 2, metrics.framesDiscarded.labelValues("reader").get(), "the two queued messages, let go by the close");
    assertEquals(0.0, metrics.framesDropped.get(), "and not as drops");
    assertEquals(0, reader.outbound().dropped(), "nor as the reader's own drops, which /status shows");
    readerChannel.finishAndReleaseAll();
    writerChannel.finishAndReleaseAll();
  }

  @Test
  void aClientThatSendsNothingNotEvenAPongForTheIdleTimeoutIsCutOffAndCounted() {
    Connection reader = TestConnections.connection("t", "r", "read");
    EmbeddedChannel channel = channel(reader);
    long pings = settings.idleTimeout().toNanos() / settings.pingInterval().toNanos();
    for (int i = 0; i < pings - 1; i++) {
      channel.advanceTimeBy(settings.pingInterval().toNanos(), TimeUnit.NANOSECONDS);
      channel.runScheduledPendingTasks();
      ByteBuf ping = channel.readOutbound();
      assertNotNull(ping, "pinged at every interval");
      assertEquals(0x80 | WsFrames.PING, ping.getUnsignedByte(0));
      ping.release();
      if (i == 0) {
        // a pong: the client is alive, and its silence counts from here
        channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.PONG, true, new byte[0]).bytes()));
      }
    }
    assertTrue(channel.isActive(), "the client answered the first ping: not idle yet");
    channel.advanceTimeBy(2 * settings.pingInterval().toNanos(), TimeUnit.NANOSECONDS);
    channel.runScheduledPendingTasks();
    assertFalse(channel.isActive(), "nothing from the client for the idle timeout: cut off");
    assertEquals(1.0, metrics.connectionsIdle.get());
    channel.finishAndReleaseAll();
  }

  /**
   * A reader that only receives, a browser watching a stream say, sends nothing of its own: the
   * node pings it while frames flow to it, and its pongs keep it past the idle timeout.
   */
  @Test
  void aReaderThatOnlyReceivesIsPingedWhileFramesFlowAndItsPongsKeepItPastTheIdleTimeout() {
    EmbeddedChannel[] channels = writerAndReader();
    EmbeddedChannel writerChannel = channels[0];
    EmbeddedChannel readerChannel = channels[1];
    long step = settings.pingInterval().toNanos() / 4;
    long steps = (settings.idleTimeout().toNanos() + 2 * settings.pingInterval().toNanos()) / step;
    int messages = 0;
    int pings = 0;
    for (long i = 0; i < steps && readerChannel.isActive(); i++) {
      writerChannel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.BINARY, true, payload(100, (int) i)).bytes()));
      for (EmbeddedChannel channel : channels) {
        channel.advanceTimeBy(step, TimeUnit.NANOSECONDS);
        channel.runScheduledPendingTasks();
        channel.runPendingTasks();
      }
      Taken taken = takeAnsweringPings(readerChannel);
      pings += taken.pings();
      messages += taken.others();
    }
    assertTrue(readerChannel.isActive(), "a reader that answers every ping is not idle, whatever it is sent: " + messages + " messages, " + pings + " pings");
    assertTrue(pings >= steps * step / settings.pingInterval().toNanos() - 1, "pinged about every interval while frames flowed: " + pings + " pings");
    assertEquals(steps, messages, "every message reached it");
    assertEquals(0.0, metrics.connectionsIdle.get(), "nobody was idle");
    readerChannel.finishAndReleaseAll();
    writerChannel.finishAndReleaseAll();
  }

  /**
   * A reader on a slow link, whose channel holds more than it takes whenever the node looks, is
   * still pinged (the ping waits behind what the channel holds) and its pongs keep it past the
   * idle timeout: it is slow, not gone.
   */
  @Test
  void aReaderWhoseChannelIsAlwaysFullIsPingedAndItsPongsKeepItPastTheIdleTimeout() {
    EmbeddedChannel channel = fullReader();
    long checks = settings.idleTimeout().toNanos() / settings.pingInterval().toNanos() + 2;
    int pings = 0;
    for (long i = 0; i < checks && channel.isActive(); i++) {
      channel.advanceTimeBy(settings.pingInterval().toNanos(), TimeUnit.NANOSECONDS);
      channel.runScheduledPendingTasks();
      pings += takeAnsweringPings(channel).pings();
    }
    assertTrue(channel.isActive(), "a slow reader that answers its pings is not idle: " + pings + " pings");
    assertTrue(pings >= checks - 2, "pinged at every check but the first: " + pings + " pings in " + checks + " checks");
    assertEquals(0.0, metrics.connectionsIdle.get(), "nobody was idle");
    channel.finishAndReleaseAll();
  }

  @Test
  void aClientWhoseChannelIsFullGetsOnlyTheNewestPongFirstOnceItHasRoom() {
    EmbeddedChannel channel = fullReader();
    for (byte ping = 1; ping <= 3; ping++) {
      channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.PING, true, new byte[] {ping}).bytes()));
    }
    assertNull(channel.readOutbound(), "no pong while the channel has no room");
    writable(channel, true);
    channel.runPendingTasks();
    ByteBuf pong = channel.readOutbound();
    assertNotNull(pong, "a pong once the channel has room");
    assertEquals(0x80 | WsFrames.PONG, pong.getUnsignedByte(0));
    assertArrayEquals(new byte[] {3}, payloadOf(pong), "the pong answers the newest ping");
    assertNull(channel.readOutbound(), "one pong: the older pings' are not kept");
    channel.finishAndReleaseAll();
  }

  @Test
  void aClientThatPingsBeforeAnsweringTheServersCloseGetsItsPong() {
    EmbeddedChannel channel = closedByTheServer();
    channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.PING, true, new byte[] {7}).bytes()));
    ByteBuf pong = channel.readOutbound();
    assertNotNull(pong, "RFC 6455 section 5.5.2: a ping is answered until the peer's close is received");
    assertEquals(0x80 | WsFrames.PONG, pong.getUnsignedByte(0));
    assertArrayEquals(new byte[] {7}, payloadOf(pong));
    channel.finishAndReleaseAll();
  }

  @Test
  void aStatsParticipantWithReadAloneHasItsMessagesTakenByItsRoom() {
    List<String> taken = new ArrayList<>();
    Room stats =
        new Room(metrics, budget) {
          @Override
          public boolean takesMessagesWithoutWrite() {
            return true;
          }

          @Override
          public void fanOut(Connection sender, WsFrames.Frame frame) {
            taken.add(frame.payload().toString(StandardCharsets.UTF_8));
          }
        };
    Connection reader = TestConnections.connection("stats", "r", "read");
    reader.joined(stats, null);
    EmbeddedChannel channel = new EmbeddedChannel(new ConnectionHandler(reader, settings, metrics, budget));
    channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().text("{\"cmd\":\"update\"}").bytes()));
    assertEquals(List.of("{\"cmd\":\"update\"}"), taken, "the update request reached the room");
    assertEquals(0, reader.stats().refusedCount(), "not refused for want of write");
    assertEquals(0, budget.used(), "nothing held");
    channel.finishAndReleaseAll();
  }

  /** A reader's channel that takes nothing more, as a client's that stopped reading. */
  private EmbeddedChannel fullReader() {
    EmbeddedChannel channel = channel(TestConnections.connection("t", "r", "read"));
    writable(channel, false);
    return channel;
  }

  /** A channel for {@code handler} whose socket has taken nothing of what was written yet: each write is kept in {@code unwritten}. */
  private static EmbeddedChannel takingNothing(ConnectionHandler handler, List<Object> unwritten) {
    return new EmbeddedChannel(
        new ChannelOutboundHandlerAdapter() {
          @Override
          public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            unwritten.add(msg);
          }
        },
        handler);
  }

  /** Makes {@code channel} take more ({@code true}) or nothing more ({@code false}, as when its client stops reading). */
  private static void writable(EmbeddedChannel channel, boolean takesMore) {
    channel.unsafe().outboundBuffer().setUserDefinedWritability(1, takesMore);
  }

  /** The pings a client answered and the other frames it took. */
  private record Taken(int pings, int others) {}

  /** Takes every frame {@code channel} wrote, answering each ping with a pong as a live client does. */
  private static Taken takeAnsweringPings(EmbeddedChannel channel) {
    int pings = 0;
    int others = 0;
    for (ByteBuf frame; (frame = channel.readOutbound()) != null; frame.release()) {
      if (frame.getUnsignedByte(0) == (0x80 | WsFrames.PING)) {
        pings++;
        channel.writeInbound(Unpooled.wrappedBuffer(new ClientFrames().frame(WsFrames.PONG, true, new byte[0]).bytes()));
      } else {
        others++;
      }
    }
    return new Taken(pings, others);
  }

  /** {@code size} bytes, each a function of its index and {@code seed}. */
  private static byte[] payload(int size, int seed) {
    byte[] bytes = new byte[size];
    for (int i = 0; i < size; i++) {
      bytes[i] = (byte) (i * 31 + seed);
    }
    return bytes;
  }

  /** The payload of one server frame (unmasked, its header two or four bytes for these sizes); releases it. */
  private static byte[] payloadOf(ByteBuf frame) {
    assertNotNull(frame, "a frame");
    try {
      byte[] bytes = ByteBufUtil.getBytes(frame);
      int header = (bytes[1] & 0x7F) == 126 ? 4 : 2;
      return Arrays.copyOfRange(bytes, header, bytes.length);
    } finally {
      frame.release();
    }
  }
}
