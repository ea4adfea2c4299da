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
 * @param attachTimeout how long an accepted upgrade may take to start its stream
 * @param codeTtl lifetime of a one-time code
 * @param codeSweepInterval how often expired codes are removed from the replicated maps
 * @param replicationTimeout timeout of majority reads and writes of codes and the deny list
 * @param denySweepInterval how often expired deny and allow entries are removed
 */
public record RelaySettings(
    int bufferSize,
    long bufferBytes,
    int maxMessageBytes,
    Duration pingInterval,
    Duration closeTimeout,
    Duration attachTimeout,
    Duration codeTtl,
    Duration codeSweepInterval,
    Duration replicationTimeout,
    Duration denySweepInterval) {

  /** Number of replicated maps the codes are spread over (fixed: keys can never be reused). */
  public static final int CODE_SHARDS = 64;

  public static RelaySettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    long maxMessage = r.bytes("relay.max-message-bytes");
    if (maxMessage > Integer.MAX_VALUE - 1024) {
      throw SettingsReader.invalid("relay.max-message-bytes", "must be under 2 GiB");
    }
    return new RelaySettings(
        r.integer("relay.buffer-size", 1, 1_000_000),
        r.bytes("relay.buffer-bytes"),
        (int) maxMessage,
        r.duration("relay.ping-interval"),
        r.duration("relay.close-timeout"),
        r.duration("relay.attach-timeout"),
        r.duration("relay.code-ttl"),
        r.duration("relay.code-sweep-interval"),
        r.duration("relay.replication-timeout"),
        r.duration("relay.deny-sweep-interval"));
  }
}
