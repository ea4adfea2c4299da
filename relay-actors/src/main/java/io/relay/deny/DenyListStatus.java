package io.relay.deny;

import java.util.function.Predicate;

/**
 * What the node's servers, readiness check and metrics know of the deny list without asking its
 * actor: whether this node has read it from a majority of nodes (since it joined, or since it last
 * lost sight of a majority), how many entries its replica holds, and each booking's verdict.
 * Written by {@link DenyList} only; safe to read from any thread.
 */
public final class DenyListStatus implements DenyVerdicts {
  private volatile boolean read;
  private volatile int entries;
  /** Whether the replica denies a booking now; the list's view, which it publishes safely. */
  private volatile Predicate<String> denied = bookingId -> false;

  /**
   * True once every shard of the deny list has been read from a majority, until the node loses
   * sight of a majority of nodes. While false the node must not issue codes or admit connections.
   */
  public boolean isRead() {
    return read;
  }

  /** Entries (denied or allowed, including expired ones not yet swept) in this node's replica. */
  public int entries() {
    return entries;
  }

  void read(boolean value) {
    read = value;
  }

  void entries(int value) {
    entries = value;
  }

  /** UNREAD until the list is read from a majority; then DENIED or ALLOWED as the replica has it. */
  @Override
  public DenyList.Verdict verdict(String bookingId) {
    if (!read) {
      return DenyList.Verdict.UNREAD;
    }
    return denied.test(bookingId) ? DenyList.Verdict.DENIED : DenyList.Verdict.ALLOWED;
  }

  void denied(Predicate<String> denied) {
    this.denied = denied;
  }
}
