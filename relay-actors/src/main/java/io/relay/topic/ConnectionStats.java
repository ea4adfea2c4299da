package io.relay.topic;

/**
 * Cheap per-connection counters: written only by the connection's own stream, read by reports.
 */
public final class ConnectionStats {
  private final long startedNanos = System.nanoTime();
  private volatile long rxCount;
  private volatile long rxBytes;
  private volatile long rxLastNanos;
  private volatile long txCount;
  private volatile long txBytes;
  private volatile long txLastNanos;
  private volatile long refused;

  void received(int bytes, long now) {
    rxCount = rxCount + 1;
    rxBytes = rxBytes + bytes;
    rxLastNanos = now;
  }

  void refused() {
    refused = refused + 1;
  }

  void sent(int bytes, long now) {
    txCount = txCount + 1;
    txBytes = txBytes + bytes;
    txLastNanos = now;
  }

  /** A point-in-time view of one direction. */
  public record Direction(double lastSeconds, double meanSize, double fps, long count) {}

  public Direction rx() {
    return direction(rxCount, rxBytes, rxLastNanos);
  }

  public Direction tx() {
    return direction(txCount, txBytes, txLastNanos);
  }

  /** Messages from this connection dropped because it may not write. */
  public long refusedCount() {
    return refused;
  }

  private Direction direction(long count, long bytes, long lastNanos) {
    long now = System.nanoTime();
    double alive = Math.max(1e-3, (now - startedNanos) / 1e9);
    double last = count == 0 ? alive : (now - lastNanos) / 1e9;
    return new Direction(last, count == 0 ? 0 : (double) bytes / count, count / alive, count);
  }
}
