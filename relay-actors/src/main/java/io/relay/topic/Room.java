package io.relay.topic;

import io.relay.metrics.RelayMetrics;
import io.relay.status.StatsFrames;
import io.relay.ws.MemoryBudget;
import io.relay.ws.WsFrames.Frame;

/**
 * A topic's current readers, published by its topic actor and read by its writers' streams.
 *
 * <p>This is the data path: a writer hands each message to every other reader's outbound queue
 * directly, as one shared frame object, with no actor hop and no copy per reader. Only the topic
 * actor replaces the reader array; writers read whichever array is current.
 *
 * <p>Public only so that the JMH benchmarks of the per-frame path (relay-actors' tests, package
 * {@code io.relay.jmh}) can drive it; in a node only the topic actor and the connection streams do.
 */
public final class Room {
  private static final Connection[] NONE = new Connection[0];

  private final RelayMetrics metrics;
  private final MemoryBudget budget;
  private final Runnable onUpdateRequest;
  private volatile Connection[] readers = NONE;

  /**
   * @param onUpdateRequest for the stats topic: run on {@code {"cmd":"update"}}, and messages are
   *     not relayed; null for every other topic
   */
  public Room(RelayMetrics metrics, MemoryBudget budget, Runnable onUpdateRequest) {
    this.metrics = metrics;
    this.budget = budget;
    this.onUpdateRequest = onUpdateRequest;
  }

  Connection[] readers() {
    return readers;
  }

  public void setReaders(Connection[] readers) {
    this.readers = readers;
  }

  /** Offers one message to every reader except its sender, counted once in the memory budget. */
  public void fanOut(Connection sender, Frame frame) {
    if (onUpdateRequest != null) {
      if (StatsFrames.isUpdateRequest(frame.payload())) {
        onUpdateRequest.run();
      }
      return;
    }
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
