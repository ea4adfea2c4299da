package io.relay.bench;

/**
 * What a reader connection received of the benchmark's messages: how many, each one's latency
 * (into its loop's {@link EventLoop.Stats}), the sequence numbers of its writer it missed or got
 * out of order, and messages of any other writer. Touched on the reader's loop only; read by
 * others once the loop stops, but {@link #received}, which a closed-loop writer reads for credit.
 */
final class Arrivals {
  /** The writer whose messages the reader expects, or -1 for none. */
  private final int expectWriter;
  volatile long received;
  /** Closed-loop mode: the writer these messages give credit to, or null. */
  EventLoop.Writer creditTo;
  long expectedSeq;
  long maxSeq = -1;
  long lost;
  long reordered;
  long foreign;

  Arrivals(int expectWriter) {
    this.expectWriter = expectWriter;
  }

  /** A whole message arrived at {@code now}: {@code head} holds its first {@code headLength} bytes. */
  void message(int opcode, byte[] head, int headLength, long bytes, long now, EventLoop.Stats stats) {
    received++;
    gaveCredit();
    if (headLength < WsClient.HEAD || opcode == 0x8) {
      stats.delivered(0, bytes);
      return;
    }
    long sentAt = longAt(head, 0);
    long s = longAt(head, 8);
    int writer = ((head[16] & 0xFF) << 24) | ((head[17] & 0xFF) << 16) | ((head[18] & 0xFF) << 8) | (head[19] & 0xFF);
    if (writer != expectWriter) {
      foreign++;
      return;
    }
    if (s > expectedSeq) {
      lost += s - expectedSeq;
      stats.lost += s - expectedSeq;
    } else if (s < expectedSeq) {
      reordered++;
      stats.reordered++;
    }
    expectedSeq = Math.max(expectedSeq, s + 1);
    maxSeq = Math.max(maxSeq, s);
    stats.delivered(now - sentAt, bytes);
  }

  /** Wakes the loop of the writer this reader gives credit to, if it waits for it. */
  private void gaveCredit() {
    EventLoop.Writer writer = creditTo;
    if (writer != null && writer.awaitingCredit) {
      writer.awaitingCredit = false;
      writer.client.loop.wakeup();
    }
  }

  private static long longAt(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[off + i] & 0xFF);
    }
    return v;
  }
}
