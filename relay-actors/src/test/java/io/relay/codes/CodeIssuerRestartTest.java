package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.relay.RelaySettings;
import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.Test;

/**
 * A node restarted at the same address is a new incarnation, which never heard of the codes its
 * predecessor issued: a code of the old incarnation that another node's replica holds is refused
 * there at once as its issuer's (401), not after asking the new incarnation in vain (503 at the
 * replication timeout).
 */
class CodeIssuerRestartTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  /** A code that outlives the restart however slow it is; a sweep that counts the replica often. */
  private static final Map<String, Object> SETTINGS = Map.of("relay.code-sweep-interval", "200ms", "relay.code-ttl", "5m");

  @Test
  void aCodeOfAnIssuerRestartedAtTheSameAddressIsRefusedAsItsIssuerGone() throws IOException {
    int port = freePort();
    ActorTestKit redeeming = ActorTestKit.create("relay", TestClusterConfig.with(SETTINGS));
    ActorTestKit issuing = ActorTestKit.create("relay", TestClusterConfig.with(Map.of("pekko.remote.artery.canonical.port", port)));
    ActorTestKit restarted = null;
    try {
      TwoNodes.join(redeeming, issuing, WAIT);
      RelaySettings settings = RelaySettings.create(redeeming.system().settings().config());
      ActorRef<CodeStore.Command> store = redeeming.spawn(CodeStore.create(settings, System::currentTimeMillis), "codes");
      ActorRef<CodeStore.Command> issuer = issuing.spawn(CodeStore.create(settings, System::currentTimeMillis), "codes");
      CodeShardStats replica = new CodeShardStats();
      redeeming.spawn(CodeSweep.create(settings, System::currentTimeMillis, replica));
      TestProbe<CodeStore.Issued> issued = issuing.createTestProbe();
      issuer.tell(new CodeStore.Issue("lab/restart", List.of("read"), "booking", 1_900_000_000L, issued.ref()));
      String code = assertInstanceOf(CodeStore.Stored.class, issued.receiveMessage(WAIT)).code();
      Await.until("the redeeming node's replica holds the code", WAIT, () -> replica.codes() == 1);

      issuing.shutdownTestKit();
      restarted = ActorTestKit.create("relay", TestClusterConfig.with(Map.of("pekko.remote.artery.canonical.port", port)));
      restarted.spawn(CodeStore.create(settings, System::currentTimeMillis), "codes");
      Cluster again = Cluster.get(restarted.system());
      again.manager().tell(Join.create(Cluster.get(redeeming.system()).selfMember().address()));
      Cluster here = Cluster.get(redeeming.system());
      Await.until(
          "the redeeming node sees the restarted node Up in place of the old one",
          WAIT,
          () -> StreamSupport.stream(here.state().getMembers().spliterator(), false)
              .anyMatch(m -> m.uniqueAddress().equals(again.selfMember().uniqueAddress()) && m.status() == MemberStatus.up()));

      assertEquals(new CodeStore.Rejected(CodeStore.Reason.ISSUER_GONE), Redeeming.redeem(redeeming, store, code, "lab/restart"));
    } finally {
      if (restarted != null) {
        restarted.shutdownTestKit();
      }
      issuing.shutdownTestKit();
      redeeming.shutdownTestKit();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
