package io.relay.codes;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Predicate;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * The code stores of the nodes that issue codes, as a {@link CodeStore} finds them: whether an
 * issuer can answer a claim now, and the store of a node named by the id in a code. Owned by one
 * code store; not thread-safe.
 */
final class Issuers {
  /** Resolved code stores kept: far more than a cluster's nodes, so only departed nodes' are dropped. */
  private static final int STORES_KEPT = 256;

  private final Cluster cluster;
  private final ActorRefResolver resolver;
  /** Where every node runs its code store. */
  private final String path;
  /** Other nodes' code stores, by node address, resolved on first use; emptied past {@link #STORES_KEPT}. */
  private final Map<Address, ActorRef<CodeStore.Command>> storesByAddress = new HashMap<>();

  Issuers(ActorSystem<?> system, String path) {
    this.cluster = Cluster.get(system);
    this.resolver = ActorRefResolver.get(system);
    this.path = path;
  }

  /**
   * Whether the issuer of {@code code} can answer: its node is a member, up (or leaving) and
   * reachable, in the incarnation whose unique id the code carries. A node restarted at the same
   * address is another incarnation, which never heard of its predecessor's codes, and a local
   * reference other than the asking store (which answers itself) is an earlier incarnation of this
   * node: neither can answer.
   */
  boolean answers(ActorRef<CodeStore.Command> issuer, String code) {
    Address address = issuer.path().address();
    OptionalLong uid = CodeFormat.issuerOf(code);
    return !address.hasLocalScope()
        && uid.isPresent()
        && serving(member -> member.address().equals(address) && member.uniqueAddress().longUid() == uid.getAsLong()) != null;
  }

  /** The code store of the member whose unique id is {@code uid}, if it is serving; else null. */
  ActorRef<CodeStore.Command> storeOf(long uid) {
    Member issuer = serving(member -> member.uniqueAddress().longUid() == uid);
    if (issuer == null) {
      return null;
    }
    if (storesByAddress.size() >= STORES_KEPT && !storesByAddress.containsKey(issuer.address())) {
      storesByAddress.clear();
    }
    return storesByAddress.computeIfAbsent(issuer.address(), a -> resolver.resolveActorRef(a + path));
  }

  /** The member {@code which} picks if it is up (or leaving) and reachable, else null. */
  private Member serving(Predicate<Member> which) {
    CurrentClusterState state = cluster.state();
    for (Member member : state.getMembers()) {
      if (which.test(member)) {
        MemberStatus status = member.status();
        boolean serving = status == MemberStatus.up() || status == MemberStatus.weaklyUp() || status == MemberStatus.leaving();
        return serving && !state.getUnreachable().contains(member) ? member : null;
      }
    }
    return null;
  }
}
