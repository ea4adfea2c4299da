package io.relay.deny;

import java.util.HashSet;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.UniqueAddress;

/**
 * The cluster as the deny list sees it: the members that have been Up, which of them this node
 * cannot reach, and so whether it can read a majority; and which members must confirm a change of
 * the list before it is answered. Fed the cluster's member and reachability events, and asked
 * again ({@link #evaluate}) while the cluster and this node's own failure detector disagree; not
 * thread-safe.
 *
 * <p>A member is unreachable in the cluster's events when any member's failure detector finds it
 * so, not only this node's. So after a partition heals, the other side's findings about nodes of
 * the majority reach a node with the gossip before that side has cleared them; counted as they
 * come, they would take a majority node's majority for about a second. A member this node's own
 * detector watches counts as unreachable only while that detector finds it so too; one it does not
 * watch (a cluster of over ten nodes watches each node from only some), as the cluster says. No
 * event comes when this node's detector loses a member the cluster already lists unreachable, so
 * the owner calls {@link #evaluate} on a timer.
 */
final class Membership {

  /** What an event changed. */
  enum Change {
    NONE,
    /** This node is Up and reaches a majority of the members (possibly again). */
    MAJORITY_REACHABLE,
    /** This node no longer reaches a majority of the members. */
    MAJORITY_LOST
  }

  private final UniqueAddress self;
  /** Whether this node's own failure detector watches a member and finds it available. */
  private final Predicate<UniqueAddress> reachedHere;
  /** Members that have been Up and are not removed yet: the nodes a majority is counted over. */
  private final Set<UniqueAddress> members = new HashSet<>();
  /** Members whose status is Up now (the replicator's count of replicas covers at least these). */
  private final Set<UniqueAddress> up = new HashSet<>();
  private final Set<UniqueAddress> unreachable = new HashSet<>();
  /** Members with the {@link DenyList#CONFIRMS_CHANGES} role. */
  private final Set<UniqueAddress> confirming = new HashSet<>();
  private boolean majority;

  Membership(UniqueAddress self, Predicate<UniqueAddress> reachedHere) {
    this.self = self;
    this.reachedHere = reachedHere;
  }

  Change apply(ClusterEvent.MemberEvent event) {
    UniqueAddress member = event.member().uniqueAddress();
    if (event instanceof ClusterEvent.MemberUp) {
      return up(member, event.member().hasRole(DenyList.CONFIRMS_CHANGES));
    } else if (event instanceof ClusterEvent.MemberRemoved) {
      members.remove(member);
      up.remove(member);
      unreachable.remove(member);
      confirming.remove(member);
    } else if (event instanceof ClusterEvent.MemberLeft
        || event instanceof ClusterEvent.MemberExited
        || event instanceof ClusterEvent.MemberDowned) {
      members.add(member);
      up.remove(member);
    }
    return evaluate();
  }

  /** {@code member} is Up; {@code confirms}: it has the {@link DenyList#CONFIRMS_CHANGES} role. */
  Change up(UniqueAddress member, boolean confirms) {
    members.add(member);
    up.add(member);
    if (confirms) {
      confirming.add(member);
    }
    return evaluate();
  }

  Change apply(ClusterEvent.ReachabilityEvent event) {
    return reachability(event.member().uniqueAddress(), event instanceof ClusterEvent.ReachableMember);
  }

  /** The cluster finds {@code member} reachable again, or unreachable (some member's failure detector does). */
  Change reachability(UniqueAddress member, boolean reachable) {
    if (reachable) {
      unreachable.remove(member);
    } else {
      unreachable.add(member);
    }
    return evaluate();
  }

  /** Members whose status is Up now. */
  int upCount() {
    return up.size();
  }

  /**
   * The addresses of the members a change of the list waits for: Up, reachable from this node,
   * and confirming changes.
   */
  Set<String> confirmers() {
    return up.stream()
        .filter(member -> confirming.contains(member) && !isUnreachable(member))
        .map(member -> member.address().toString())
        .collect(Collectors.toUnmodifiableSet());
  }

  private boolean isUnreachable(UniqueAddress member) {
    return unreachable.contains(member) && !reachedHere.test(member);
  }

  private int reachable() {
    int reachable = 0;
    for (UniqueAddress member : members) {
      if (!isUnreachable(member)) {
        reachable++;
      }
    }
    return reachable;
  }

  /** Counts the majority again, this node's failure detector asked afresh. */
  Change evaluate() {
    boolean before = majority;
    majority = members.contains(self) && reachable() * 2 > members.size();
    if (majority) {
      return Change.MAJORITY_REACHABLE;
    }
    // once this node itself is removed it is shutting down: nothing to report
    return before && members.contains(self) ? Change.MAJORITY_LOST : Change.NONE;
  }

  @Override
  public String toString() {
    return (members.size() - reachable()) + " of " + members.size() + " members unreachable";
  }
}
