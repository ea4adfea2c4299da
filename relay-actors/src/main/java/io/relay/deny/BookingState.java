package io.relay.deny;

import io.relay.CborSerializable;

/**
 * A booking's entry in the replicated deny/allow map.
 *
 * @param denied true when denied, false when explicitly allowed
 * @param expiresAt epoch seconds after which the entry no longer applies
 */
public record BookingState(boolean denied, long expiresAt) implements CborSerializable {

  /** Whether the entry no longer applies at {@code now} (epoch seconds). */
  public boolean expiredAt(long now) {
    return expiresAt <= now;
  }
}
