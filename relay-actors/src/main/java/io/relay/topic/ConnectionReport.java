package io.relay.topic;

import io.relay.CborSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

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

  /** Another node's report without its scopes or its traffic is refused as it is read. */
  public ConnectionReport {
    scopes = List.copyOf(scopes);
    Objects.requireNonNull(stats, "stats");
  }

  /** Traffic in each direction, and frames dropped from the outbound queue. */
  public record Stats(Direction tx, Direction rx, long dropped) implements CborSerializable {
    public Stats {
      Objects.requireNonNull(tx, "tx");
      Objects.requireNonNull(rx, "rx");
    }
  }

  /**
   * @param last seconds since the last message
   * @param size mean message size in bytes
   * @param fps mean messages per second since the connection opened
   */
  public record Direction(double last, double size, double fps) implements CborSerializable {}

  /**
   * What the reports of one part may take at most, by {@link #estimatedBytes}: with a node's
   * recent events, a part stays under half of Artery's 256 KiB maximum frame size.
   */
  public static final int PART_BYTES = 96 * 1024;

  /** Field names, numbers and the envelope of one report in CBOR, rounded up. */
  private static final int FIXED_BYTES = 400;

  /** An upper bound of this report's serialized size: three bytes a character, plus the fixed part. */
  public int estimatedBytes() {
    int chars = length(topic) + length(node) + length(bookingId) + length(connectedAt) + length(expiresAt) + length(remoteAddr) + length(userAgent);
    for (String scope : scopes) {
      chars += scope.length() + 1;
    }
    return FIXED_BYTES + 3 * chars;
  }

  /** {@code reports} in parts of at most {@code maxBytes} each (at least one part, one report a part at least). */
  public static List<List<ConnectionReport>> inParts(List<ConnectionReport> reports, int maxBytes) {
    List<List<ConnectionReport>> parts = new ArrayList<>();
    List<ConnectionReport> part = new ArrayList<>();
    int bytes = 0;
    for (ConnectionReport report : reports) {
      int size = report.estimatedBytes();
      if (!part.isEmpty() && bytes + size > maxBytes) {
        parts.add(List.copyOf(part));
        part.clear();
        bytes = 0;
      }
      part.add(report);
      bytes += size;
    }
    parts.add(List.copyOf(part));
    return parts;
  }

  private static int length(String value) {
    return value == null ? 0 : value.length();
  }

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
