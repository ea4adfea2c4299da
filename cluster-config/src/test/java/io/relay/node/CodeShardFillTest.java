package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.RelaySettings;
import io.relay.codes.CodeStore;
import io.relay.testing.Await;
import io.relay.testing.ShardSizing;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The code shards filled on a three-node cluster in this JVM, codes issued on all three nodes at
 * once: every node's replica ends up holding every code (no shard outgrew what Distributed Data
 * can replicate), and the fullest shard holds about what docs/cluster.md's sizing predicts for
 * that many codes. {@code -Dcodes.fill=150000} is the sizing's full load (3,000 codes/s for
 * 50 s); 6,000 by default. Only that measuring form prints the issue rate it reached; it is never
 * asserted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CodeShardFillTest {
  private static final int CODES = Integer.getInteger("codes.fill", 6_000);
  /** Whether the test was asked for the measuring form: then it prints what it measured. */
  private static final boolean MEASURING = System.getProperty("codes.fill") != null;
  private static final int IN_FLIGHT = 64;
  /** Nothing expires while the shards fill; the sweep, which counts them, runs every second. */
  private static final Map<String, Object> SETTINGS = Map.of("relay.code-ttl", "10m", "relay.code-sweep-interval", "1s");

  private List<TestNode> nodes;

  @BeforeAll
  void startCluster() {
    TestNode seed = TestNode.start(SETTINGS);
    nodes = List.of(seed, TestNode.joining(seed, SETTINGS), TestNode.joining(seed, SETTINGS));
  }

  @AfterAll
  void stopCluster() {
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  @Test
  void everyNodeHoldsEveryCodeAndTheFullestShardIsAsSized() throws Exception {
    List<ActorRef<CodeStore.Command>> stores = nodes.stream().map(CodeShardFillTest::codeStore).toList();
    Semaphore inFlight = new Semaphore(IN_FLIGHT);
    AtomicInteger stored = new AtomicInteger();
    AtomicInteger unavailable = new AtomicInteger();
    long started = System.nanoTime();
    for (int i = 0; i < CODES; i++) {
      assertTrue(inFlight.tryAcquire(30, TimeUnit.SECONDS), "an issue was not answered within 30 s");
      ActorRef<CodeStore.Command> store = stores.get(i % stores.size());
      TestNode node = nodes.get(i % nodes.size());
      String topic = "fill/" + (i % 1_000);
      String booking = "booking-" + (i % 500);
      CompletionStage<CodeStore.Issued> answer =
          AskPattern.ask(
              store,
              replyTo -> new CodeStore.Issue(topic, List.of("read", "write"), booking, 2_000_000_000L, replyTo),
              Duration.ofSeconds(10),
              node.system.scheduler());
      answer.whenComplete((issued, failure) -> {
        if (issued instanceof CodeStore.Stored) {
          stored.incrementAndGet();
        } else {
          unavailable.incrementAndGet();
        }
        inFlight.release();
      });
    }
    assertTrue(inFlight.tryAcquire(IN_FLIGHT, 30, TimeUnit.SECONDS), "every issue answered");
    double seconds = (System.nanoTime() - started) / 1e9;
    if (MEASURING) {
      System.out.printf("issued %d codes on three nodes in %.1f s (%.0f/s), %d unavailable%n", stored.get(), seconds, stored.get() / seconds, unavailable.get());
    }
    assertEquals(CODES, stored.get(), "every code was stored (" + unavailable.get() + " unavailable)");

    for (TestNode node : nodes) {
      Await.until(
          "the replica of " + node.address() + " holds all " + CODES + " codes",
          Duration.ofSeconds(60),
          () -> node.metric("relay_codes_replicated") == CODES,
          () -> node.metric("relay_codes_replicated") + " codes, fullest shard " + node.metric("relay_code_shard_largest"));
    }
    long sized = ShardSizing.fullestShard(CODES, RelaySettings.CODE_SHARDS);
    for (TestNode node : nodes) {
      double largest = node.metric("relay_code_shard_largest");
      if (MEASURING) {
        System.out.printf("%s: fullest shard %.0f codes (sizing: %d)%n", node.address(), largest, sized);
      }
      assertTrue(largest <= sized, "the fullest shard of " + node.address() + " holds " + largest + " codes, the sizing " + sized);
      long even = (CODES + RelaySettings.CODE_SHARDS - 1) / RelaySettings.CODE_SHARDS;
      assertTrue(largest >= even, "the gauge counts the codes: the fullest shard of " + node.address() + " holds " + largest
          + ", fewer than the " + even + " that " + CODES + " codes put in one shard at least");
    }
  }

  private static ActorRef<CodeStore.Command> codeStore(TestNode node) {
    try {
      return Adapter.toTyped(
          node.system.classicSystem().actorSelection("/user/codes").resolveOne(Duration.ofSeconds(10)).toCompletableFuture().get());
    } catch (Exception e) {
      throw new AssertionError("no code store on " + node.address(), e);
    }
  }
}
