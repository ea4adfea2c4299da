package io.relay.topic;

import io.relay.CborSerializable;
import java.util.List;

/**
 * One connection as reported by {@code GET /status} and the stats topic; never holds a code or a
 * token.
 *
 * @param node the hosting node's cluster address
 * @param connectedAt ISO-8601 instant
 * @param expiresAt ISO-8601 instant at which the token behind the connection expires
 */
public record ConnectionReport(
    String topic,
    String node,
    String bookingId,
    boolean canRead,
    boolean canWrite,
    String connectedAt,
    String expiresAt,
    String remoteAddr,
    String userAgent,
    List<String> scopes,
    Stats stats)
    implements CborSerializable {

  /** Traffic in each direction, and frames dropped from the outbound queue. */
  public record Stats(Direction tx, Direction rx, long dropped) implements CborSerializable {}

  /**
   * @param last seconds since the last message
   * @param size mean message size in bytes
   * @param fps mean messages per second since the connection opened
   */
  public record Direction(double last, double size, double fps) implements CborSerializable {}

  static ConnectionReport of(Connection connection, String node) {
    Connection.Grant grant = connection.grant();
    ConnectionStats stats = connection.stats();
    return new ConnectionReport(
        grant.topic(),
        node,
        grant.bookingId(),
        grant.canRead(),
        grant.canWrite(),
        grant.connectedAt().toString(),
        grant.expiresAt().toString(),
        grant.remoteAddr(),
        grant.userAgent(),
        grant.scopes(),
        new Stats(
            direction(stats.tx()), direction(stats.rx()), connection.outbound().dropped()));
  }

  private static Direction direction(ConnectionStats.Direction d) {
    return new Direction(round(d.lastSeconds()), round(d.meanSize()), round(d.fps()));
  }

  private static double round(double value) {
    return Math.round(value * 1000) / 1000.0;
  }
}
