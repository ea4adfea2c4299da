package io.relay.deny;

import io.relay.CborSerializable;
import java.util.Objects;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A change of the deny list that is stored on a majority, sent by the node that wrote it straight
 * to every node's {@link DenyList}. Each node applies it to its view at once, ahead of
 * replication, and confirms; the writer answers the change's request once every reachable member
 * has confirmed (docs/cluster.md, "A strict deny").
 *
 * @param request the writer's number for the change, echoed in the confirmation
 * @param replyTo where the confirmation goes
 */
public record ListChange(String bookingId, BookingState state, long request, ActorRef<ListChange.Confirmed> replyTo)
    implements DenyList.FromOtherNodes, CborSerializable {

  /** A change without what it changes, or without where to confirm, is refused as it is read. */
  public ListChange {
    Objects.requireNonNull(bookingId, "bookingId");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(replyTo, "replyTo");
  }

  /**
   * A node has applied a change: from now on its code requests and admissions see it.
   *
   * @param node the confirming node's address
   */
  public record Confirmed(long request, String node) implements CborSerializable {
    public Confirmed {
      Objects.requireNonNull(node, "node");
    }
  }
}
