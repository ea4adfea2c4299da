package io.relay.memory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node-wide bound on what clients can make the node hold: frames queued for readers (and the
 * ones each reader's channel is writing) and messages still being received. Each shared frame is
 * counted once, whatever the number of readers holding it.
 *
 * <p>When a charge takes the total past the limit, the budget sheds: it asks the connections
 * holding the most to let go, biggest first, until what they hold would bring the total back
 * under nine tenths of the limit. A shed connection drops what is queued for it at once and is
 * closed with 1013 (try again later); see {@link Holder#shed}. The connections holding little,
 * which is every reader that keeps up, are never touched. A message that needs more memory to go
 * on arriving while the node is at its limit is refused outright ({@link #tryCharge}), so what
 * writers make the node allocate never waits for shed connections to let go.
 */
public final class MemoryBudget {
  /** What one connection holds, and how it lets go. */
  public interface Holder {
    /** The bytes this connection holds now: an estimate, read from any thread. */
    long held();

    /** Lets go of everything it holds and closes; called from any thread, at most once. */
    void shed();
  }

  private final long limit;
  private final long lowWater;
  private final AtomicLong used = new AtomicLong();
  /** Connections that were shed and have not ended yet: what they still hold is on its way back. */
  private final Set<Holder> shedding = ConcurrentHashMap.newKeySet();
  private final Map<Holder, Boolean> holders = new ConcurrentHashMap<>();
  private final AtomicBoolean shedInProgress = new AtomicBoolean();
  private final ShedListener listener;

  /** Told of each connection shed, to count and log it. */
  public interface ShedListener {
    void shed(Holder holder, long held);
  }

  public MemoryBudget(long limit, ShedListener listener) {
    if (limit <= 0) {
      throw new IllegalArgumentException("the memory budget must be positive: " + limit);
    }
    this.limit = limit;
    this.lowWater = limit - limit / 10;
    this.listener = listener;
  }

  /** A budget that never sheds, for tests and benchmarks. */
  public static MemoryBudget unlimited() {
    return new MemoryBudget(Long.MAX_VALUE, (holder, held) -> { });
  }

  public long limit() {
    return limit;
  }

  /** The bytes counted now. */
  public long used() {
    return used.get();
  }

  public void register(Holder holder) {
    holders.put(holder, Boolean.TRUE);
  }

  /** Whether {@code holder} has been chosen to be shed (and told to the listener) and has not ended yet. */
  public boolean isShedding(Holder holder) {
    return shedding.contains(holder);
  }

  /** The connection ended: it no longer counts, nor waits to let go. */
  public void unregister(Holder holder) {
    holders.remove(holder);
    shedding.remove(holder);
  }

  /**
   * Counts {@code bytes} that are already held (a complete message offered to its readers),
   * shedding if that passes the limit.
   */
  public void charge(long bytes) {
    if (used.addAndGet(bytes) > limit) {
      shed();
    }
  }

  /**
   * Counts {@code bytes} about to be allocated (a message growing as it arrives), unless that
   * would pass the limit: then nothing is counted, the biggest holders are shed, and the caller
   * must not allocate.
   *
   * @return whether the bytes may be allocated
   */
  public boolean tryCharge(long bytes) {
    if (used.addAndGet(bytes) <= limit) {
      return true;
    }
    used.addAndGet(-bytes);
    shed();
    return false;
  }

  public void release(long bytes) {
    used.addAndGet(-bytes);
  }

  /**
   * Sheds the biggest holders until what they hold, with what holders already shed still hold (on
   * its way back), would bring the total under the low-water mark. One thread sheds at a time; a
   * charge that finds shedding under way goes on (the pass running will see it).
   */
  private void shed() {
    if (!shedInProgress.compareAndSet(false, true)) {
      return;
    }
    try {
      long pending = shedding.stream().mapToLong(Holder::held).sum();
      long excess = used.get() - pending - lowWater;
      if (excess <= 0) {
        return;
      }
      List<Map.Entry<Holder, Long>> candidates = new ArrayList<>();
      for (Holder holder : holders.keySet()) {
        long held = holder.held();
        if (held > 0 && !shedding.contains(holder)) {
          candidates.add(Map.entry(holder, held));
        }
      }
      candidates.sort(Comparator.comparingLong((Map.Entry<Holder, Long> e) -> e.getValue()).reversed());
      for (Map.Entry<Holder, Long> candidate : candidates) {
        if (excess <= 0) {
          break;
        }
        Holder holder = candidate.getKey();
        long held = candidate.getValue();
        shedding.add(holder);
        if (!holders.containsKey(holder)) {
          // it ended meanwhile: nothing left to wait for
          shedding.remove(holder);
          continue;
        }
        excess -= held;
        listener.shed(holder, held);
        holder.shed();
      }
    } finally {
      shedInProgress.set(false);
    }
  }
}
