package io.relay.deny;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.UniqueAddress;
import org.junit.jupiter.api.Test;

/**
 * Whether a node counts a majority of the cluster as reachable: as the cluster's events tell it,
 * except for the members its own failure detector watches, which count as unreachable only while
 * that detector finds them so too.
 */
class MembershipTest {
  private final UniqueAddress self = node(1);
  private final UniqueAddress two = node(2);
  private final UniqueAddress three = node(3);
  /** The members this node's own failure detector watches and finds available. */
  private final Set<UniqueAddress> reachedHere = new HashSet<>();
  private final Membership membership = new Membership(self, reachedHere::contains);

  @Test
  void aNodeThatLosesSightOfTheOtherTwoOfThreeHasNoMajorityUntilOneIsBack() {
    threeUp();
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(two, false));
    assertEquals(Membership.Change.MAJORITY_LOST, membership.reachability(three, false));
    assertEquals("2 of 3 members unreachable", membership.toString());
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(two, true));
  }

  @Test
  void theOtherSidesStaleFindingsAfterAHealDoNotTakeTheMajorityOfANodeThatReachesEveryone() {
    threeUp();
    // this node and two kept the majority while three was cut off; after the heal, three's finding
    // that two was unreachable comes with the gossip while two's finding about three is not cleared
    // yet, and this node's own detector finds both available
    reachedHere.add(two);
    reachedHere.add(three);
    membership.reachability(three, false);
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(two, false));
    assertEquals("0 of 3 members unreachable", membership.toString());
    assertEquals(Set.of(self.address().toString(), two.address().toString(), three.address().toString()), membership.confirmers());
  }

  @Test
  void aMemberTheClusterListsUnreachableCountsOnceThisNodesOwnDetectorLosesItToo() {
    threeUp();
    reachedHere.add(two);
    membership.reachability(three, false);
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(two, false), "this node reaches two itself");
    reachedHere.remove(two); // no event: the cluster lists two unreachable already
    assertEquals(Membership.Change.MAJORITY_LOST, membership.evaluate(), "counted again, two is lost here too");
  }

  private void threeUp() {
    membership.up(self, true);
    membership.up(two, true);
    membership.up(three, true);
  }

  private static UniqueAddress node(int n) {
    return new UniqueAddress(new Address("pekko", "relay", "10.0.0." + n, 25520), n);
  }
}
