package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.ws.WsFrames.Frame;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/** The frames a connection handed to its socket, held until the socket has written them. */
class FramesInSocketTest {
  private final MemoryBudget budget = new MemoryBudget(1 << 30, (holder, held) -> {});
  private final FramesInSocket inSocket = new FramesInSocket();

  /** A relayed frame of {@code size} bytes held by this connection alone. */
  private Frame frame(int size) {
    Frame frame = WsFrames.frame(WsFrames.BINARY, ByteString.fromArrayUnsafe(new byte[size]));
    frame.share(budget, 1);
    return frame;
  }

  @Test
  void eachFrameIsLetGoOfWhenTheSocketHasWrittenItOldestFirst() {
    inSocket.handed(frame(100));
    inSocket.handed(frame(30));
    assertEquals(130, inSocket.bytes());
    assertEquals(130, budget.used());
    inSocket.written();
    assertEquals(30, inSocket.bytes(), "the oldest went");
    assertEquals(30, budget.used());
    assertFalse(inSocket.isEmpty());
    inSocket.written();
    assertTrue(inSocket.isEmpty());
    assertEquals(0, budget.used());
  }

  @Test
  void whatTheSocketHeldWhenTheConnectionEndedIsLetGoOfWithoutItsArrayBeingReused() {
    byte[] array = ReadArrays.take(30_014);
    Frame inRead = WsFrames.frame(WsFrames.BINARY, array, 14, 30_000);
    inRead.inReadArray(array);
    inRead.share(budget, 1);
    inRead.release(); // the stage that read it is done with the read
    inSocket.handed(inRead);
    long pooled = ReadArrays.pooledBytes();
    inSocket.abandonAll();
    assertEquals(0, budget.used(), "the budget gets its bytes back");
    assertEquals(pooled, ReadArrays.pooledBytes(), "the socket may still be writing the array");
    inSocket.written(); // a report that comes after the end finds nothing
    assertEquals(0, inSocket.bytes());
  }
}
