package io.relay.deny;

import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.UniqueAddress;

/**
 * The cluster as the deny list sees it: the members that have been Up, which of them are
 * unreachable, and so whether this node can read a majority; and which members must confirm a
 * change of the list before it is answered. Fed the cluster's member and reachability events; not
 * thread-safe.
 *
 * <p>A member is unreachable in the cluster's events when any member's failure detector finds it
 * so, not only this node's (Pekko never reports this node itself). So for a moment after a
 * partition heals, the other side's findings about nodes of the majority, which reach a node with
 * the gossip before that side has cleared them, can take a majority node's majority: it reads the
 * list again and serves again about a second later. That errs towards refusing (503), never
 * towards issuing codes without a majority.
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
  /** Members that have been Up and are not removed yet: the nodes a majority is counted over. */
  private final Set<UniqueAddress> members = new HashSet<>();
  /** Members whose status is Up now (the replicator's count of replicas covers at least these). */
  private final Set<UniqueAddress> up = new HashSet<>();
  private final Set<UniqueAddress> unreachable = new HashSet<>();
  /** Members with the {@link DenyList#CONFIRMS_CHANGES} role. */
  private final Set<UniqueAddress> confirming = new HashSet<>();
  private boolean majority;

  Membership(UniqueAddress self) {
    this.self = self;
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
    } else if (event instanceof ClusterEvent.MemberLeft || event instanceof ClusterEvent.MemberExited) {
      return leaving(member);
    } else if (event instanceof ClusterEvent.MemberDowned) {
      return downed(member);
    }
    return evaluate();
  }

  /**
   * {@code member} is leaving (Leaving, then Exiting): no longer Up, but it serves, codes
   * included, while it drains, so it still confirms changes until it is removed.
   */
  Change leaving(UniqueAddress member) {
    members.add(member);
    up.remove(member);
    return evaluate();
  }

  /** {@code member} was downed: it serves nothing more and confirms nothing. */
  Change downed(UniqueAddress member) {
    members.add(member);
    up.remove(member);
    confirming.remove(member);
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
   * The addresses of the members a change of the list waits for: Up or leaving (a leaving node
   * serves while it drains), reachable from this node, and confirming changes.
   */
  Set<String> confirmers() {
    return members.stream()
        .filter(member -> confirming.contains(member) && !unreachable.contains(member))
        .map(member -> member.address().toString())
        .collect(Collectors.toUnmodifiableSet());
  }

  private int reachable() {
    int reachable = 0;
    for (UniqueAddress member : members) {
      if (!unreachable.contains(member)) {
        reachable++;
      }
    }
    return reachable;
  }

  private Change evaluate() {
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
