package io.relay.topic;

import io.relay.ws.CloseCodes;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
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
  /** Whether its topic took it ({@code JOINED}) or its admission was given up first ({@code ABANDONED}). */
  private final AtomicReference<JoinState> admission = new AtomicReference<>(JoinState.ADMITTING);

  private enum JoinState { ADMITTING, JOINED, ABANDONED }

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

  /** Its topic takes it, unless its admission was given up: then it must not ({@code false}). */
  boolean joined(Room room, ActorRef<TopicActor.Command> topicActor) {
    this.room = room;
    this.topicActor = topicActor;
    return admission.compareAndSet(JoinState.ADMITTING, JoinState.JOINED);
  }

  /**
   * Its admission was given up after its join was sent (the join was not answered in time, and
   * its client was answered 503): its topic does not take it, or, if it already has, drops it now
   * rather than at the attach deadline, so that it holds no frames meanwhile.
   */
  public void abandonAdmission() {
    if (!admission.compareAndSet(JoinState.ADMITTING, JoinState.ABANDONED) && admission.get() == JoinState.JOINED) {
      topicActor.tell(new TopicActor.Left(id, "its join was answered too late; its client was refused with 503"));
    }
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
