package io.relay.http.socket;

import java.time.Duration;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timeouts of a {@link SocketServer}'s connections, as one sweep over all of them instead of a
 * timer and a stage per connection: a connection that took longer than the header timeout over a
 * request head, or neither read nor wrote for the idle timeout, is reset; one that was answered and
 * waited {@link #LINGER} for its peer to close is closed. The sweep runs at Pekko HTTP's own check
 * interval: an eighth of the shorter timeout, between 100 ms and 1 s.
 */
final class ConnectionSweep {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionSweep.class);

  /**
   * How long a connection that was answered and shut down for output may wait for its peer to
   * close before it is closed anyway.
   */
  static final Duration LINGER = Duration.ofSeconds(2);

  private final Set<SocketEndpoint> endpoints;
  private final Duration headerTimeout;
  /** Zero for none. */
  private final Duration idleTimeout;
  private final SocketCounters counters;

  private ConnectionSweep(Set<SocketEndpoint> endpoints, Duration headerTimeout, Duration idleTimeout, SocketCounters counters) {
    this.endpoints = endpoints;
    this.headerTimeout = headerTimeout;
    this.idleTimeout = idleTimeout;
    this.counters = counters;
  }

  /**
   * Sweeps {@code endpoints} from now on, for as long as {@code system} runs.
   *
   * @param idleTimeout zero for none
   */
  static void start(
      ActorSystem<?> system, Set<SocketEndpoint> endpoints, Duration headerTimeout, Duration idleTimeout, SocketCounters counters) {
    ConnectionSweep sweep = new ConnectionSweep(endpoints, headerTimeout, idleTimeout, counters);
    long shortest = idleTimeout.isZero() ? headerTimeout.toNanos() : Math.min(idleTimeout.toNanos(), headerTimeout.toNanos());
    Duration interval = Duration.ofNanos(Math.max(Math.min(shortest / 8, 1_000_000_000L), Math.min(100_000_000L, shortest / 2)));
    system.scheduler().scheduleWithFixedDelay(interval, interval, sweep::sweep, system.executionContext());
  }

  private void sweep() {
    long now = System.nanoTime();
    endpoints.forEach(
        e -> {
          long headStarted = e.headStarted();
          if (headStarted != 0 && now - headStarted > headerTimeout.toNanos()) {
            LOG.debug("closing a connection whose request head took longer than {}", headerTimeout);
            counters.headerTimeouts.increment();
            e.reset();
          } else if (e.lingerStarted() != 0 && now - e.lingerStarted() > LINGER.toNanos()) {
            e.close();
          } else if (!idleTimeout.isZero() && now - e.lastActive() > idleTimeout.toNanos()) {
            LOG.debug("closing a connection idle for {}", idleTimeout);
            counters.idleTimeouts.increment();
            e.reset();
          }
        });
  }
}
