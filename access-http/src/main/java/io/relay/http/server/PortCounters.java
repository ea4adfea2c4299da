package io.relay.http.server;

import java.util.concurrent.atomic.LongAdder;

/** What the node's client ports count, for its metrics: one instance per node, shared by its ports. */
public final class PortCounters {
  /** accept() calls that failed (file descriptors exhausted, or another error). */
  public final LongAdder acceptFailures = new LongAdder();
  /** Connections closed for not sending a whole request head within the header timeout. */
  public final LongAdder headerTimeouts = new LongAdder();
  /** Access API connections closed for being idle: nothing read and nothing of an answer written for the idle timeout. */
  public final LongAdder idleTimeouts = new LongAdder();
  /** Times a port stopped accepting because the node held max-connections. */
  public final LongAdder limitReached = new LongAdder();
  /** Request heads refused because they could not be read (400, 414, 431, 505). */
  public final LongAdder malformedHeads = new LongAdder();
  /** Access API request bodies refused with 413 for being over the port's limit. */
  public final LongAdder oversizedBodies = new LongAdder();
  /** Access API connections closed for pipelining more requests than the port reads ahead. */
  public final LongAdder pipelineOverflows = new LongAdder();
}
