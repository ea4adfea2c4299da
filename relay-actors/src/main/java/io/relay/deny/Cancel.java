package io.relay.deny;

import io.relay.CborSerializable;
import java.util.Objects;

/**
 * A denied booking, published on the cluster's cancel channel by the node that wrote the deny, so
 * that every node's {@link DenyList} has the booking's connections closed at once.
 */
public record Cancel(String bookingId) implements CborSerializable {
  /** Another node's cancel without its booking is refused as it is read (docs/cluster.md, "Wire formats and versions"). */
  public Cancel {
    Objects.requireNonNull(bookingId, "bookingId");
  }
}
