package io.relay.http.server;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The node-wide count of client connections, shared by its client ports: they stop accepting at
 * the limit, and every port resumes when a connection of any port closes.
 */
public final class ConnectionSlots {
  private final int limit;
  private final AtomicInteger used = new AtomicInteger();
  private final List<Runnable> onFree = new CopyOnWriteArrayList<>();

  public ConnectionSlots(int limit) {
    this.limit = limit;
  }

  public int limit() {
    return limit;
  }

  /** Connections open now. */
  public int used() {
    return used.get();
  }

  /** Takes a slot for a new connection; false at the limit. */
  boolean tryAcquire() {
    while (true) {
      int now = used.get();
      if (now >= limit) {
        return false;
      }
      if (used.compareAndSet(now, now + 1)) {
        return true;
      }
    }
  }

  /** Gives a connection's slot back, and tells the ports that wait for one. */
  void release() {
    used.decrementAndGet();
    onFree.forEach(Runnable::run);
  }

  void onFree(Runnable resume) {
    onFree.add(resume);
  }
}
