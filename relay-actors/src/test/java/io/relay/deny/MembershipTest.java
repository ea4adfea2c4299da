package io.relay.deny;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.stream.Collectors;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.UniqueAddress;
import org.junit.jupiter.api.Test;

/**
 * Whether a node counts a majority of the cluster as reachable, and which members a change of the
 * deny list waits for, as the cluster's events tell it.
 */
class MembershipTest {
  private final UniqueAddress self = node(1);
  private final UniqueAddress two = node(2);
  private final UniqueAddress three = node(3);
  private final Membership membership = new Membership(self);

  @Test
  void aNodeThatLosesSightOfTheOtherTwoOfThreeHasNoMajorityUntilOneIsBack() {
    threeUp();
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(two, false));
    assertEquals(Membership.Change.MAJORITY_LOST, membership.reachability(three, false));
    assertEquals("2 of 3 members unreachable", membership.toString());
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(two, true));
  }

  @Test
  void theOtherSidesFindingsAfterAHealTakeAMajorityUntilTheyAreCleared() {
    threeUp();
    // this node and two kept the majority while three was cut off; after the heal, three's finding
    // that two was unreachable comes with the gossip while one's finding about three is not cleared yet
    membership.reachability(three, false);
    assertEquals(Membership.Change.MAJORITY_LOST, membership.reachability(two, false));
    assertEquals(Membership.Change.MAJORITY_REACHABLE, membership.reachability(three, true));
  }

  @Test
  void aChangeWaitsForTheMembersThatServeLeavingOnesIncludedButNotForDownedOrUnreachableOnes() {
    threeUp();
    assertEquals(Set.of(self, two, three).stream().map(n -> n.address().toString()).collect(Collectors.toSet()), membership.confirmers());
    membership.leaving(three); // it drains, and issues codes meanwhile
    assertTrue(membership.confirmers().contains(three.address().toString()), "a leaving member still confirms");
    membership.reachability(two, false);
    assertEquals(Set.of(self.address().toString(), three.address().toString()), membership.confirmers(), "an unreachable one is not waited for");
    membership.downed(three);
    assertEquals(Set.of(self.address().toString()), membership.confirmers(), "a downed one serves nothing more");
    Membership later = new Membership(self);
    later.up(self, true);
    later.up(two, false);
    assertEquals(Set.of(self.address().toString()), later.confirmers(), "a member of a build that does not confirm is not waited for");
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
