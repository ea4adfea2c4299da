package io.relay.topic;

import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.ws.WsFrames.Frame;

/**
 * A topic's current readers, published by its topic actor and read by its writers' handlers.
 *
 * <p>This is the data path: a writer hands each message to every other reader's outbound queue
 * directly, as one shared frame object, with no actor hop and no copy per reader. Only the topic
 * actor replaces the reader array; writers read whichever array is current.
 *
 * <p>A topic that does not relay ({@link SpecialTopics}: the stats topic) has a room of its own
 * kind that does something else with each message. Public for those rooms and for the JMH
 * benchmarks of the per-frame path (relay-bench, package {@code io.relay.jmh}).
 */
public class Room {
  private static final Connection[] NONE = new Connection[0];

  private final RelayMetrics metrics;
  private final MemoryBudget budget;
  private volatile Connection[] readers = NONE;

  public Room(RelayMetrics metrics, MemoryBudget budget) {
    this.metrics = metrics;
    this.budget = budget;
  }

  /** The topic's readers now. */
  public Connection[] readers() {
    return readers;
  }

  public void setReaders(Connection[] readers) {
    this.readers = readers;
  }

  /**
   * Whether a participant without {@code write} sends this room its messages: only a room that
   * does something else with them says so (the stats topic's, for its update request).
   */
  public boolean takesMessagesWithoutWrite() {
    return false;
  }

  /** Offers one message to every reader except its sender, counted once in the memory budget. */
  public void fanOut(Connection sender, Frame frame) {
    Connection[] readers = this.readers;
    boolean senderReads = false;
    for (Connection reader : readers) {
      senderReads |= reader == sender;
    }
    frame.share(budget, readers.length - (senderReads ? 1 : 0));
    long dropped = 0;
    for (Connection reader : readers) {
      if (reader != sender) {
        dropped += reader.outbound().offer(frame);
      }
    }
    if (dropped > 0) {
      metrics.framesDropped.inc(dropped);
    }
  }
}
