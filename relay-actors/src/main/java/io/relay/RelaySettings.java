package io.relay;

import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.time.Duration;

/**
 * The data-path, code and deny-list settings of {@code relay { }}, read once at startup.
 *
 * @param bufferSize per-connection outbound queue, in messages
 * @param bufferBytes per-connection outbound queue, in bytes
 * @param maxMessageBytes largest accepted message; larger ones close the sender with 1009
 * @param pingInterval how often an idle connection is pinged
 * @param closeTimeout how long a closing connection waits for the peer's close frame
 * @param idleTimeout how long a connection may go without a byte from its client (a live client
 *     answers every ping) before it is cut off
 * @param attachTimeout how long an accepted upgrade may take to reach its channel
 * @param codeTtl lifetime of a one-time code
 * @param codeSweepInterval how often expired codes are removed from the replicated maps
 * @param replicationTimeout timeout of the deny list's majority reads and writes and of a claim at a code's issuer
 * @param denySweepInterval how often expired deny and allow entries are removed
 * @param denyMaxLifetime how far ahead a deny's or allow's {@code exp} may lie
 * @param claims the claim and hold-down timings
 * @param drainSpread how long a draining node takes to close all its connections with 1001
 * @param statusTimeout how long a cluster-wide status waits for each node's reports
 * @param statsEvery how often participants of the stats topic receive the cluster's reports
 * @param tokenLeeway clock skew tolerated on a token's {@code exp}: a connection closes with 4000
 *     this long after it
 * @param memoryBudget the bytes of queued frames and partly received messages the node holds at
 *     most before it sheds the connections holding the most
 */
public record RelaySettings(
    int bufferSize,
    long bufferBytes,
    int maxMessageBytes,
    Duration pingInterval,
    Duration closeTimeout,
    Duration idleTimeout,
    Duration attachTimeout,
    Duration codeTtl,
    Duration codeSweepInterval,
    Duration replicationTimeout,
    Duration denySweepInterval,
    Duration denyMaxLifetime,
    Claims claims,
    Duration drainSpread,
    Duration statusTimeout,
    Duration statsEvery,
    Duration tokenLeeway,
    long memoryBudget) {

  /**
   * Claim timings.
   *
   * @param announce whether a node announces a claim at once (off leaves repair to the digest)
   * @param digestInterval how often each node republishes the claims of all its topics
   * @param holdDown how long an evicted topic is refused on the node that lost it
   * @param maxHoldDown the longest hold-down a flapping topic gets
   * @param flapWindow a topic evicted again within this is flapping: its hold-down doubles
   */
  public record Claims(
      boolean announce, Duration digestInterval, Duration holdDown, Duration maxHoldDown, Duration flapWindow) {}

  /**
   * Number of replicated maps the codes are spread over; fixed, since
   * every node must look for a code in the same map. Sized so that each map stays well under
   * Artery's maximum frame size at 3,000 codes/s: docs/cluster.md, "Sizing the replicated maps".
   */
  public static final int CODE_SHARDS = 2048;

  /**
   * How long a caller waits for a cluster-wide status: the gathering's own two steps (finding the
   * nodes' registries, then their answers, each {@link #statusTimeout}) and one more for its
   * answer, so that the caller always gets what was gathered rather than a timeout of its own.
   */
  public Duration statusAnswerTimeout() {
    return statusTimeout.multipliedBy(3);
  }

  public static RelaySettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    Duration pingInterval = r.duration("relay.ping-interval");
    Duration idleTimeout = r.duration("relay.idle-timeout");
    if (idleTimeout.compareTo(pingInterval) <= 0) { // the first ping round would cut off every client that only reads
      throw SettingsReader.invalid(
          "relay.idle-timeout", "expected more than RELAY_PING_INTERVAL (" + pingInterval + "), whose pings a client that only reads answers, got " + idleTimeout);
    }
    return new RelaySettings(
        r.integer("relay.buffer-size", 1, 1_000_000),
        r.bytes("relay.buffer-bytes"),
        (int) r.bytes("relay.max-message-bytes", 1, Integer.MAX_VALUE - 1024),
        pingInterval,
        r.duration("relay.close-timeout"),
        idleTimeout,
        r.duration("relay.attach-timeout"),
        r.duration("relay.code-ttl"),
        r.duration("relay.code-sweep-interval"),
        r.duration("relay.replication-timeout"),
        r.duration("relay.deny-sweep-interval"),
        r.duration("relay.deny-max-lifetime"),
        new Claims(
            r.bool("relay.claims.announce"),
            r.duration("relay.claims.digest-interval"),
            r.duration("relay.claims.hold-down"),
            r.duration("relay.claims.max-hold-down"),
            r.duration("relay.claims.flap-window")),
        r.duration("relay.drain-spread"),
        r.duration("relay.status-timeout"),
        r.duration("relay.stats-every"),
        r.wholeSeconds("relay.token-leeway"),
        memoryBudget(r, Runtime.getRuntime().maxMemory()));
  }

  /** {@code relay.memory-budget}: a byte size, or a percentage of the heap's maximum size. */
  static long memoryBudget(SettingsReader r, long maxHeap) {
    String value = r.string("relay.memory-budget").trim();
    if (value.endsWith("%")) {
      double percent;
      try {
        percent = Double.parseDouble(value.substring(0, value.length() - 1).trim());
      } catch (NumberFormatException e) {
        throw SettingsReader.invalid("relay.memory-budget", "expected a percentage of the heap such as 50% or a size such as 256MiB");
      }
      if (!(percent > 0 && percent <= 90)) { // NaN too
        throw SettingsReader.invalid("relay.memory-budget", "a percentage of the heap must be above 0% and at most 90%");
      }
      return (long) (maxHeap * percent / 100);
    }
    return r.bytes("relay.memory-budget");
  }
}
