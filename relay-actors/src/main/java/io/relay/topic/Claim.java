package io.relay.topic;

import io.relay.CborSerializable;
import java.util.Comparator;

/**
 * A node's claim to host a topic. Claims are totally ordered by stamp, then node address, so
 * every node agrees which of two claims is newer; the newest wins.
 *
 * @param stamp milliseconds, above the stamp of the claim that last evicted this node from the
 *     topic while the node remembers that eviction (see {@link ClaimBook})
 */
public record Claim(String topic, String node, long stamp) implements CborSerializable {
  static final Comparator<Claim> ORDER =
      Comparator.comparingLong(Claim::stamp).thenComparing(Claim::node);

  boolean isNewerThan(Claim other) {
    return ORDER.compare(this, other) > 0;
  }
}
