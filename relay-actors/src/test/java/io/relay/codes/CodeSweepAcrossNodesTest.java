package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.relay.RelaySettings;
import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;

/**
 * Two nodes sweep one set of replicated code shards: expired codes leave both replicas, and each
 * shard is pruned once, by its one sweeper, not once by every node.
 */
class CodeSweepAcrossNodesTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final long NOW = 1_800_000_000_000L;
  private static final int CODES = 40;

  @Test
  void expiredCodesLeaveEveryReplicaAndEachShardIsPrunedByOneNode() {
    Map<String, Object> sweepingOften = Map.of("relay.code-sweep-interval", "200ms");
    ActorTestKit first = ActorTestKit.create("relay", TestClusterConfig.with(sweepingOften));
    ActorTestKit second = ActorTestKit.create("relay", TestClusterConfig.with(sweepingOften));
    try {
      TwoNodes.join(first, second, WAIT);
      AtomicLong clock = new AtomicLong(NOW);
      RelaySettings settings = RelaySettings.create(first.system().settings().config());
      CodeShardStats firstStats = new CodeShardStats();
      CodeShardStats secondStats = new CodeShardStats();
      ActorRef<CodeStore.Command> issuer = first.spawn(CodeStore.create(settings, clock::get), "codes");
      first.spawn(CodeSweep.create(settings, clock::get, firstStats));
      second.spawn(CodeSweep.create(settings, clock::get, secondStats));

      TestProbe<CodeStore.Issued> issued = first.createTestProbe();
      Set<Integer> shards = new HashSet<>();
      for (int i = 0; i < CODES; i++) {
        issuer.tell(new CodeStore.Issue("lab/swept", List.of("read"), "booking", NOW / 1000 + 3600, issued.ref()));
        String code = assertInstanceOf(CodeStore.Stored.class, issued.receiveMessage(WAIT)).code();
        shards.add(CodeStore.shardOf(code));
      }
      Await.until("both replicas hold the " + CODES + " codes", WAIT,
          () -> firstStats.codes() == CODES && secondStats.codes() == CODES, () -> firstStats.codes() + " and " + secondStats.codes());

      // a sweep interval past their expiry: what the sweep removes
      clock.addAndGet(settings.codeTtl().toMillis() + settings.codeSweepInterval().toMillis());
      Await.until("both replicas count the codes expired", WAIT,
          () -> firstStats.codes() == 0 && secondStats.codes() == 0, () -> firstStats.codes() + " and " + secondStats.codes());
      Await.until("every shard that held a code is pruned", WAIT,
          () -> firstStats.prunes() + secondStats.prunes() >= shards.size(), () -> firstStats.prunes() + " + " + secondStats.prunes());
      // three more sweeps of every shard on both nodes: nothing is left to prune, and no shard was pruned twice
      long firstSlices = firstStats.slicesSwept();
      long secondSlices = secondStats.slicesSwept();
      int threeSweeps = 3 * CodeSweep.SLICES;
      Await.until("both nodes sweep every shard three more times", WAIT,
          () -> firstStats.slicesSwept() >= firstSlices + threeSweeps && secondStats.slicesSwept() >= secondSlices + threeSweeps);
      assertEquals(shards.size(), firstStats.prunes() + secondStats.prunes(),
          "each of the " + shards.size() + " shards pruned once (first node " + firstStats.prunes() + ", second " + secondStats.prunes() + ")");
    } finally {
      second.shutdownTestKit();
      first.shutdownTestKit();
    }
  }
}
