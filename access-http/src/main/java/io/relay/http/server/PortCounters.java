package io.relay.http.server;

import java.util.concurrent.atomic.LongAdder;

/** What the node's client ports count, for its metrics: one instance per node, shared by its ports. */
public final class PortCounters {
  final LongAdder acceptFailures = new LongAdder();
  final LongAdder headerTimeouts = new LongAdder();
  final LongAdder idleTimeouts = new LongAdder();
  final LongAdder limitReached = new LongAdder();
  final LongAdder malformedHeads = new LongAdder();
  private final LongAdder oversizedBodies = new LongAdder();
  private final LongAdder pipelineOverflows = new LongAdder();

  /** accept() calls that failed (file descriptors exhausted, or another error). */
  public long acceptFailures() {
    return acceptFailures.sum();
  }

  /** Connections closed for not sending a whole request head within the header timeout. */
  public long headerTimeouts() {
    return headerTimeouts.sum();
  }

  /** Access API connections closed for being idle between requests for the idle timeout. */
  public long idleTimeouts() {
    return idleTimeouts.sum();
  }

  /** Request heads refused because they could not be read (400, 414, 431, 505). */
  public long malformedHeads() {
    return malformedHeads.sum();
  }

  /** Times a port stopped accepting because the node held max-connections. */
  public long limitReached() {
    return limitReached.sum();
  }

  /** Access API request bodies refused with 413 for being over the port's limit. */
  public long oversizedBodies() {
    return oversizedBodies.sum();
  }

  /** Access API connections closed for pipelining more requests than the port reads ahead. */
  public long pipelineOverflows() {
    return pipelineOverflows.sum();
  }

  /** Counts a request body refused with 413. */
  public void oversizedBody() {
    oversizedBodies.increment();
  }

  /** Counts a connection closed for pipelining too many requests. */
  public void pipelineOverflow() {
    pipelineOverflows.increment();
  }

  /** Counts an access API connection closed for being idle. */
  public void idleTimeout() {
    idleTimeouts.increment();
  }
}
