package io.relay.http.server;

import com.sun.management.UnixOperatingSystemMXBean;
import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.time.Duration;

/**
 * The limits of the node's client ports, read once at startup.
 *
 * @param maxConnections the connections all of the node's client ports hold together; past it
 *     they stop accepting (new connections wait in the kernel's backlog) until one closes
 * @param headerTimeout how long a client may take to send a request's head (on the access port
 *     the whole request, its body included): a connection's first from its accept, a later one
 *     from its first bytes; past it the connection is reset
 * @param eventLoops the threads serving the client ports' connections, each serving its share of
 *     them for their whole life
 * @param writeBuffer what a connection's channel holds of outgoing bytes before the relay stops
 *     writing to it (frames then wait in the connection's queue)
 * @param idleTimeout how long an access API connection may be idle between requests
 * @param backlog the kernel's queue of connections not yet accepted, per port
 */
public record PortSettings(
    int maxConnections, Duration headerTimeout, int eventLoops, int writeBuffer, Duration idleTimeout, int backlog) {
  /** The file descriptors kept for everything but client connections: at least this many. */
  static final int MIN_RESERVED_DESCRIPTORS = 256;

  public static PortSettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    String max = r.string("relay.max-connections").trim();
    int maxConnections =
        max.equals("auto") ? fromDescriptorLimit(descriptorLimit()) : r.integer("relay.max-connections", 1, Integer.MAX_VALUE);
    String loops = r.string("relay.event-loops").trim();
    return new PortSettings(
        maxConnections,
        r.duration("relay.header-timeout"),
        loops.equals("auto") ? Runtime.getRuntime().availableProcessors() : r.integer("relay.event-loops", 1, 256),
        (int) r.bytes("relay.write-buffer", 1024, 64L * 1024 * 1024),
        r.duration("relay.idle-timeout"),
        r.integer("relay.backlog", 1, 65535));
  }

  /**
   * {@code max-connections = auto}: the process's file descriptor limit less a reserve for the
   * JVM, the cluster's connections, the management port and logs (a tenth of the limit, at least
   * {@value #MIN_RESERVED_DESCRIPTORS}); a process that cannot tell its limit gets 10,000.
   */
  static int fromDescriptorLimit(long limit) {
    if (limit <= 0) {
      return 10_000;
    }
    long reserve = Math.max(MIN_RESERVED_DESCRIPTORS, limit / 10);
    return (int) Math.max(1, Math.min(Integer.MAX_VALUE, limit - reserve));
  }

  /** The process's file descriptor limit (the soft limit), or -1 where the JDK cannot tell. */
  static long descriptorLimit() {
    OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    return os instanceof UnixOperatingSystemMXBean unix ? unix.getMaxFileDescriptorCount() : -1;
  }
}
