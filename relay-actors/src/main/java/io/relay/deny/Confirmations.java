package io.relay.deny;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The changes of the deny list this node has stored and sent to every confirming member, each
 * awaiting their confirmations ({@link ListChange.Confirmed}). Owned by {@link DenyList}; not
 * thread-safe.
 */
final class Confirmations {
  /** A change past its deadline, and the members that have not confirmed it. */
  record Overdue(DenyList.Set set, Set<String> missing) {}

  private record Pending(DenyList.Set set, Set<String> confirmed) {}

  private final Map<Long, Pending> pending = new HashMap<>();
  private long requests;

  /** A stored change now awaits its confirmations: its request number. */
  long open(DenyList.Set set) {
    long request = ++requests;
    pending.put(request, new Pending(set, new HashSet<>()));
    return request;
  }

  /** {@code node} confirmed {@code request} (ignored once the change is answered). */
  void confirmed(long request, String node) {
    Pending change = pending.get(request);
    if (change != null) {
      change.confirmed().add(node);
    }
  }

  /** The changes every one of {@code confirmers} has confirmed, by request: they no longer await. */
  Map<Long, DenyList.Set> answerable(Set<String> confirmers) {
    Map<Long, DenyList.Set> answerable = new HashMap<>();
    pending.entrySet().removeIf(
        entry -> {
          boolean done = entry.getValue().confirmed().containsAll(confirmers);
          if (done) {
            answerable.put(entry.getKey(), entry.getValue().set());
          }
          return done;
        });
    return answerable;
  }

  /** {@code request} at its deadline: no longer awaited; null if it was answered already. */
  Overdue overdue(long request, Set<String> confirmers) {
    Pending change = pending.remove(request);
    if (change == null) {
      return null;
    }
    Set<String> missing = new TreeSet<>(confirmers);
    missing.removeAll(change.confirmed());
    return new Overdue(change.set(), missing);
  }
}
