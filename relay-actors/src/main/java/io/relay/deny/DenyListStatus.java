package io.relay.deny;

/**
 * What the node's servers, readiness check and metrics know of the deny list without asking its
 * actor: whether this node has read it from a majority of nodes (since it joined, or since it last
 * lost sight of a majority) and how many entries its replica holds. Written by {@link DenyList}
 * only; safe to read from any thread.
 */
public final class DenyListStatus {
  private volatile boolean read;
  private volatile int entries;

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
}
