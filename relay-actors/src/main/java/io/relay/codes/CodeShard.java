package io.relay.codes;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.AbstractDeltaReplicatedData;
import org.apache.pekko.cluster.ddata.DeltaReplicatedData;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.RemovedNodePruning;
import org.apache.pekko.cluster.ddata.ReplicatedDelta;

/**
 * One shard of the replicated codes: a grow-only map from code to {@link CodeEntry} with a
 * pruning horizon, a CRDT of this project's own (Pekko's "custom data type").
 *
 * <p>Merge takes the later horizon and the union of the entries, less every entry whose code
 * expires at or before that horizon. Taking the maximum and a filtered union are commutative,
 * associative and idempotent, so replicas that have seen the same writes hold the same shard,
 * whatever the order. A code is written once, under 128 random bits, so two replicas never hold
 * different entries for one code; should they, the merge keeps the receiver's.
 *
 * <p>Issuing a code adds an entry; the sweep advances the horizon to a sweep interval before its
 * clock ({@link CodeSweep}), which removes the entries expired by then everywhere the horizon reaches. Neither leaves a tombstone, and a shard's
 * replicated form is its entries and one number: no per-entry causal metadata (dots, version
 * vectors, writer addresses, timestamps), which an LWWMap carries for every entry and which
 * Distributed Data serialises again for every delta, digest and gossip round.
 *
 * <p>The entries are kept in the order of their codes, so that equal shards serialise to equal
 * bytes: Distributed Data compares replicas by a digest of their serialised form.
 *
 * <p>The shard is its own delta type, as Pekko's GSet is: the delta of an update is the entries it
 * added and the horizon it set. Redemption checks expiry against the redeeming node's clock.
 *
 * <p>The shard holds nothing of a node, but it takes part in Pekko's pruning of removed nodes
 * ({@link RemovedNodePruning}, pruning that changes nothing here): Distributed Data records in each
 * key's envelope every node incarnation that wrote a delta to it, and removes a removed
 * incarnation's record only from data that is pruned. Without it, every incarnation that ever
 * issued codes (a node restarted, upgraded, or crashed) would stay in up to all the shards'
 * envelopes on every node, and in their full-state gossip, for the cluster's life.
 */
public final class CodeShard extends AbstractDeltaReplicatedData<CodeShard, CodeShard>
    implements ReplicatedDelta, RemovedNodePruning {

  /** The shard no code has been written to. */
  public static final CodeShard EMPTY = new CodeShard(Map.of(), Long.MIN_VALUE, null);

  private final Map<String, CodeEntry> entries;
  private final long horizon;
  private final CodeShard delta;

  CodeShard(Map<String, CodeEntry> entries, long horizon, CodeShard delta) {
    this.entries = entries;
    this.horizon = horizon;
    this.delta = delta;
  }

  /** The key of shard {@code index} of the codes. */
  public static Key<CodeShard> key(int index) {
    return new ShardKey("code-shard-" + index);
  }

  /** The entry of {@code code}, or null. */
  public CodeEntry get(String code) {
    return entries.get(code);
  }

  /** The codes and their entries, read-only. */
  public Map<String, CodeEntry> entries() {
    return entries;
  }

  /** Codes that expire at or before it are gone; {@link Long#MIN_VALUE} while never pruned. */
  public long horizon() {
    return horizon;
  }

  /** This shard with {@code code} added (codes are never rewritten). */
  public CodeShard put(String code, CodeEntry entry) {
    if (entry.grant().codeExpiresAt() <= horizon) {
      return this;
    }
    Map<String, CodeEntry> added = new TreeMap<>(entries);
    added.put(code, entry);
    CodeShard change = delta == null ? new CodeShard(Map.of(code, entry), Long.MIN_VALUE, null) : delta.put(code, entry).resetDelta();
    return new CodeShard(Collections.unmodifiableMap(added), horizon, change);
  }

  /** How many entries expire at or before {@code time}: what {@link #prunedTo} would remove. */
  public int expiredAt(long time) {
    int expired = 0;
    for (CodeEntry entry : entries.values()) {
      if (entry.grant().codeExpiresAt() <= time) {
        expired++;
      }
    }
    return expired;
  }

  /** This shard with its horizon advanced to {@code time}: the entries expired by then removed. */
  public CodeShard prunedTo(long time) {
    if (time <= horizon) {
      return this;
    }
    CodeShard change = new CodeShard(Map.of(), time, null);
    if (delta != null) {
      change = delta.mergeData(change);
    }
    return new CodeShard(unexpired(entries, Map.of(), time), time, change);
  }

  @Override
  public CodeShard mergeData(CodeShard that) {
    long later = Math.max(horizon, that.horizon);
    if (later == horizon && that.entries.isEmpty()) {
      return delta == null ? this : resetDelta();
    }
    return new CodeShard(unexpired(entries, that.entries, later), later, null);
  }

  @Override
  public CodeShard mergeDeltaData(CodeShard that) {
    return mergeData(that);
  }

  @Override
  public Optional<CodeShard> deltaData() {
    return Optional.ofNullable(delta);
  }

  @Override
  public CodeShard resetDelta() {
    return delta == null ? this : new CodeShard(entries, horizon, null);
  }

  @Override
  public DeltaReplicatedData zero() {
    return EMPTY;
  }

  /** The entries of {@code mine}, then those of {@code theirs} it lacks, that outlive {@code horizon}. */
  private static Map<String, CodeEntry> unexpired(
      Map<String, CodeEntry> mine, Map<String, CodeEntry> theirs, long horizon) {
    Map<String, CodeEntry> result = new TreeMap<>();
    theirs.forEach((code, entry) -> {
      if (entry.grant().codeExpiresAt() > horizon) {
        result.put(code, entry);
      }
    });
    mine.forEach((code, entry) -> {
      if (entry.grant().codeExpiresAt() > horizon) {
        result.put(code, entry);
      }
    });
    return Collections.unmodifiableMap(result);
  }

  /** None that the shard records: it keeps no writer, and Distributed Data knows removed nodes from the membership. */
  @Override
  public scala.collection.immutable.Set<UniqueAddress> modifiedByNodes() {
    return scala.collection.immutable.Set$.MODULE$.empty();
  }

  /** Every removed node: Distributed Data's record of its deltas to this shard goes only with a pruning. */
  @Override
  public boolean needPruningFrom(UniqueAddress removedNode) {
    return true;
  }

  @Override
  public CodeShard prune(UniqueAddress removedNode, UniqueAddress collapseInto) {
    return this;
  }

  @Override
  public CodeShard pruningCleanup(UniqueAddress removedNode) {
    return this;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CodeShard other && horizon == other.horizon && entries.equals(other.entries);
  }

  @Override
  public int hashCode() {
    return entries.hashCode() * 31 + Long.hashCode(horizon);
  }

  @Override
  public String toString() {
    return "CodeShard(" + entries.size() + " codes, horizon " + horizon + ")";
  }

  private static final class ShardKey extends Key<CodeShard> {
    private static final long serialVersionUID = 1L;

    ShardKey(String id) {
      super(id);
    }
  }
}
