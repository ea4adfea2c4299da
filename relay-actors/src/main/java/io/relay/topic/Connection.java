package io.relay.topic;

import io.relay.ws.CloseCodes;
import java.time.Instant;
import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * One accepted participant of a topic: who it is, what it may do, its outbound queue and counters.
 *
 * <p>Created by the relay route after its code is redeemed, owned by its topic actor, and shared
 * with the connection's channel handler ({@link ConnectionHandler}), which drains {@link
 * #outbound()}.
 */
public final class Connection {
  /** What the code granted and where the participant came from; never the code itself. */
  public record Grant(
      String topic,
      String bookingId,
      List<String> scopes,
      Instant connectedAt,
      Instant expiresAt,
      String remoteAddr,
      String userAgent) {
    public boolean canRead() {
      return scopes.contains("read");
    }

    public boolean canWrite() {
      return scopes.contains("write");
    }
  }

  private final long id;
  private final Grant grant;
  private final OutboundQueue outbound;
  private final ConnectionStats stats = new ConnectionStats();
  private volatile Room room;
  private volatile ActorRef<TopicActor.Command> topicActor;
  private volatile boolean attached;

  public Connection(long id, Grant grant, OutboundQueue outbound) {
    this.id = id;
    this.grant = grant;
    this.outbound = outbound;
  }

  public long id() {
    return id;
  }

  public Grant grant() {
    return grant;
  }

  public OutboundQueue outbound() {
    return outbound;
  }

  public ConnectionStats stats() {
    return stats;
  }

  Room room() {
    return room;
  }

  ActorRef<TopicActor.Command> topicActor() {
    return topicActor;
  }

  void joined(Room room, ActorRef<TopicActor.Command> topicActor) {
    this.room = room;
    this.topicActor = topicActor;
  }

  /**
   * Asks the connection's handler to close with this code. Moves and drains (4001, 1001) first
   * deliver what is already queued; every other close is immediate, and overtakes a move or drain
   * still delivering; otherwise the first request wins ({@link OutboundQueue#close}).
   */
  void close(int code, String reason) {
    outbound.close(code, reason, code == CloseCodes.TOPIC_MOVED || code == CloseCodes.GOING_AWAY);
  }

  /** Called by the connection's handler when it is added to the connection's channel. */
  void attached() {
    attached = true;
  }

  boolean isAttached() {
    return attached;
  }

  /** The close code the server asked for, or 0 if it has not closed this connection. */
  int closeCode() {
    return outbound.closeCode();
  }
}
