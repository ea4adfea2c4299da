package io.relay.codes;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.UniqueAddress;
import org.junit.jupiter.api.Test;

/**
 * The code shard is a CRDT: replicas that receive the same changes, in any order, any number of
 * times, as deltas or as whole shards, end equal; the horizon removes expired codes everywhere it
 * reaches and a late copy of an expired code never brings it back.
 */
class CodeShardTest {
  /** Issuers are not compared here; a null issuer stands for any. */
  private static CodeEntry expiringAt(long codeExpiresAt) {
    return new CodeEntry(new CodeGrant("demo", List.of("read"), "b1", 2_000_000_000L, codeExpiresAt), null);
  }

  @Test
  void aCodeWrittenOnOneReplicaReachesAnotherByItsDelta() {
    CodeShard written = CodeShard.EMPTY.put("c1", expiringAt(100));
    CodeShard delta = written.deltaData().orElseThrow();
    assertEquals(1, delta.entries().size(), "the delta carries the new code only");

    CodeShard other = CodeShard.EMPTY.put("c0", expiringAt(100)).resetDelta();
    CodeShard merged = other.mergeDeltaData(delta);
    assertNotNull(merged.get("c1"));
    assertNotNull(merged.get("c0"));
    assertTrue(merged.deltaData().isEmpty(), "a merge makes no new delta");
  }

  @Test
  void aShardTakesPartInThePruningOfEveryRemovedNodeAndIsLeftAsItWas() {
    UniqueAddress removed = new UniqueAddress(new Address("pekko", "relay", "10.0.0.9", 25520), 7L);
    UniqueAddress collapseInto = new UniqueAddress(new Address("pekko", "relay", "10.0.0.1", 25520), 1L);
    CodeShard shard = CodeShard.EMPTY.put("c1", expiringAt(100)).resetDelta();
    assertTrue(shard.needPruningFrom(removed), "so that Distributed Data drops its record of the node's deltas to the shard");
    assertEquals(shard, shard.prune(removed, collapseInto), "the shard holds nothing of a node");
    assertEquals(shard, shard.pruningCleanup(removed));
    assertTrue(shard.modifiedByNodes().isEmpty(), "removed nodes are known from the membership");
  }

  @Test
  void mergingIsCommutativeAssociativeAndIdempotent() {
    Random random = new Random(7);
    for (int round = 0; round < 200; round++) {
      List<CodeShard> replicas = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        CodeShard shard = CodeShard.EMPTY;
        for (int i = 0; i < random.nextInt(6); i++) {
          shard = shard.put("c" + random.nextInt(12), expiringAt(10 + random.nextInt(40)));
        }
        if (random.nextBoolean()) {
          shard = shard.prunedTo(random.nextInt(40));
        }
        replicas.add(shard.resetDelta());
      }
      CodeShard a = replicas.get(0);
      CodeShard b = replicas.get(1);
      CodeShard c = replicas.get(2);
      if (sameCodeDiffers(a, b) || sameCodeDiffers(b, c) || sameCodeDiffers(a, c)) {
        continue; // a code is written once; replicas never disagree on its entry
      }
      assertEquals(a.mergeData(b), b.mergeData(a), "commutative");
      assertEquals(a.mergeData(b).mergeData(c), a.mergeData(b.mergeData(c)), "associative");
      assertEquals(a, a.mergeData(a), "idempotent");
      assertEquals(a.mergeData(b), a.mergeData(b).mergeData(b), "merging again changes nothing");
    }
  }

  @Test
  void theHorizonRemovesExpiredCodesOnEveryReplicaItReaches() {
    CodeShard full = CodeShard.EMPTY.put("old", expiringAt(10)).put("young", expiringAt(50)).resetDelta();
    CodeShard pruned = full.prunedTo(20);
    assertNull(pruned.get("old"));
    assertNotNull(pruned.get("young"));

    CodeShard delta = pruned.deltaData().orElseThrow();
    assertTrue(delta.entries().isEmpty(), "pruning sends the horizon, not the codes");
    CodeShard elsewhere = full.mergeDeltaData(delta);
    assertEquals(pruned.resetDelta(), elsewhere, "the other replica prunes the same codes");
  }

  @Test
  void aLateCopyOfAnExpiredCodeDoesNotComeBack() {
    CodeShard pruned = CodeShard.EMPTY.put("young", expiringAt(50)).prunedTo(20).resetDelta();
    CodeShard late = CodeShard.EMPTY.put("old", expiringAt(10)).resetDelta();
    assertNull(pruned.mergeData(late).get("old"), "by merge");
    assertNull(pruned.mergeDeltaData(late).get("old"), "by delta");
    assertSame(pruned, pruned.put("old", expiringAt(10)), "by a write");
  }

  @Test
  void aHorizonThatDoesNotAdvanceChangesNothing() {
    CodeShard shard = CodeShard.EMPTY.put("c", expiringAt(50)).prunedTo(20).resetDelta();
    assertSame(shard, shard.prunedTo(10));
    assertSame(shard, shard.mergeData(CodeShard.EMPTY));
    assertEquals(1, shard.expiredAt(50));
    assertEquals(0, shard.expiredAt(49));
  }

  private static boolean sameCodeDiffers(CodeShard x, CodeShard y) {
    return x.entries().entrySet().stream()
        .anyMatch(e -> y.entries().containsKey(e.getKey()) && !y.entries().get(e.getKey()).equals(e.getValue()));
  }
}
