package io.relay.http.socket;

import java.util.concurrent.atomic.LongAdder;

/** What the node's own sockets count, for its metrics: one instance per node, shared by its ports. */
public final class SocketCounters {
  final LongAdder acceptFailures = new LongAdder();
  final LongAdder headerTimeouts = new LongAdder();
  final LongAdder idleTimeouts = new LongAdder();
  final LongAdder limitReached = new LongAdder();
  final LongAdder malformedHeads = new LongAdder();
  final LongAdder selectorSpin = new LongAdder();

  /** accept() calls that failed (file descriptors exhausted, or another error). */
  public long acceptFailures() {
    return acceptFailures.sum();
  }

  /** Connections closed for not sending a whole request head within the header timeout. */
  public long headerTimeouts() {
    return headerTimeouts.sum();
  }

  /** Connections closed for neither reading nor writing within the idle timeout. */
  public long idleTimeouts() {
    return idleTimeouts.sum();
  }

  /** Request heads on the relay port refused because they could not be read (400, 414, 431, 505). */
  public long malformedHeads() {
    return malformedHeads.sum();
  }

  /** Nanoseconds the selector threads spent polling their sockets before waiting ({@link SelectorSpin}). */
  public long selectorSpinNanos() {
    return selectorSpin.sum();
  }

  /** Times a port stopped accepting because the node held max-connections. */
  public long limitReached() {
    return limitReached.sum();
  }
}
