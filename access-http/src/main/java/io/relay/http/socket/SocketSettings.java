package io.relay.http.socket;

import com.sun.management.UnixOperatingSystemMXBean;
import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.time.Duration;

/**
 * The limits of the node's own sockets, read once at startup.
 *
 * @param maxConnections the connections all of the node's client ports hold together; past it
 *     they stop accepting (new connections wait in the kernel's backlog) until one closes
 * @param headerTimeout how long a client may take to send a request's head once it has started
 *     it; past it the connection is closed
 * @param selectors the selector threads of each client port, each serving its share of the
 *     port's connections
 * @param selectorSpin how long a busy selector thread polls its sockets before it waits
 *     ({@link SelectorSpin}); zero for never
 */
public record SocketSettings(int maxConnections, Duration headerTimeout, int selectors, Duration selectorSpin) {
  /** The most selector threads a port may have. */
  static final int MAX_SELECTORS = 256;

  /** The longest a selector thread may poll before it waits. */
  static final Duration MAX_SELECTOR_SPIN = Duration.ofMillis(1);

  /** The file descriptors kept for everything but client connections: at least this many. */
  static final int MIN_RESERVED_DESCRIPTORS = 256;

  public static SocketSettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    String max = r.string("relay.max-connections").trim();
    int maxConnections;
    if (max.equals("auto")) {
      maxConnections = fromDescriptorLimit(descriptorLimit());
    } else {
      maxConnections = r.integer("relay.max-connections", 1, Integer.MAX_VALUE);
    }
    String selectors = r.string("relay.socket-selectors").trim();
    return new SocketSettings(
        maxConnections,
        r.duration("relay.header-timeout"),
        selectors.equals("auto")
            ? Runtime.getRuntime().availableProcessors()
            : r.integer("relay.socket-selectors", 1, MAX_SELECTORS),
        selectorSpin(r));
  }

  private static Duration selectorSpin(SettingsReader r) {
    String key = "relay.socket-selector-spin";
    if (r.string(key).trim().equals("off")) {
      return Duration.ZERO;
    }
    Duration spin = r.duration(key);
    if (spin.compareTo(MAX_SELECTOR_SPIN) > 0) {
      throw SettingsReader.invalid(
          key, "expected off or at most " + MAX_SELECTOR_SPIN.toMillis() + "ms, got " + spin.toNanos() / 1_000 + "us");
    }
    return spin;
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
