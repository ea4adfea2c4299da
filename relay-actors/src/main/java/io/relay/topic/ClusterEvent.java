package io.relay.topic;

import io.relay.CborSerializable;
import java.util.Objects;

/**
 * Something an operator wants to see on the cluster page: a claim, an eviction, a hold-down
 * refusal or a deny, as one node saw it.
 *
 * @param at ISO-8601 instant
 * @param kind claim, eviction, flapping or deny
 * @param subject the topic or booking id
 * @param detail a short human-readable explanation
 */
public record ClusterEvent(String at, String node, String kind, String subject, String detail)
    implements CborSerializable {
  /** Another node's event without its time, by which the cluster page orders events, is refused as it is read. */
  public ClusterEvent {
    Objects.requireNonNull(at, "at");
  }
}
