package io.relay.topic;

import io.relay.metrics.RelayMetrics;
import org.apache.pekko.http.impl.engine.ws.FrameStart;

/**
 * A topic's current readers, published by its topic actor and read by its writers' streams.
 *
 * <p>This is the data path: a writer hands each message to every other reader's outbound queue
 * directly, as one shared frame object, with no actor hop and no copy per reader. Only the topic
 * actor replaces the reader array; writers read whichever array is current.
 */
final class Room {
  private static final Connection[] NONE = new Connection[0];

  private final RelayMetrics metrics;
  private volatile Connection[] readers = NONE;

  Room(RelayMetrics metrics) {
    this.metrics = metrics;
  }

  void setReaders(Connection[] readers) {
    this.readers = readers;
  }

  /** Offers one message to every reader except its sender. */
  void fanOut(Connection sender, FrameStart frame) {
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
