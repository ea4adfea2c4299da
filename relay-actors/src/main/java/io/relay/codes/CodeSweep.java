package io.relay.codes;

import io.relay.RelaySettings;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Removes expired codes from the replicated {@link CodeShard}s and counts what this node's replica
 * holds ({@link CodeShardStats}). Pruning advances a shard's horizon to one {@code
 * code-sweep-interval} before the node's clock, which removes the codes expired by then on every
 * node the change reaches: a code stays until the second sweep after it expires (redemption
 * refuses it as expired meanwhile), so a sweeper whose clock is ahead of another node's by up to
 * an interval never removes a code before it expires by that node's clock. A horizon ahead of
 * this node's clock means a node's clock is ahead of this one's by more than that: {@link
 * CodeShardStats#horizonAheadSeconds} shows by how much.
 *
 * <p>The sweep goes through the shards a slice at a time, {@link #SLICES} slices per {@code
 * code-sweep-interval}, so its work is spread over the interval. Each shard is pruned by one node
 * only, its sweeper: the Up member at the shard's index modulo the number of Up members, in address
 * order. Every node pruning every shard would replicate one change per node and shard each interval
 * where one does; a shard whose sweeper is gone is taken over as soon as the membership changes.
 */
public final class CodeSweep extends AbstractBehavior<CodeSweep.Command> {

  /** Messages the sweep understands. */
  public sealed interface Command {}

  private enum Tick implements Command {
    INSTANCE
  }

  private record ShardRead(int index, boolean prune, Replicator.GetResponse<CodeShard> response) implements Command {}

  private record Ignored(Object response) implements Command {}

  /** Slices of the shards the sweep goes through, one per {@code code-sweep-interval / SLICES}. */
  static final int SLICES = 10;

  private final ReplicatorMessageAdapter<Command, CodeShard> replicator;
  private final Cluster cluster;
  private final LongSupplier clock;
  /** How long past its expiry a code stays: the sweep interval, the clock skew the codes tolerate. */
  private final long graceMillis;
  private final CodeShardStats stats;
  /** The slice the next tick goes through. */
  private int nextSlice;

  /** A sweep of this node's replica every {@code relay.code-sweep-interval}, reporting to {@code stats}. */
  public static Behavior<Command> create(RelaySettings settings, LongSupplier clockMillis, CodeShardStats stats) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.codeSweepInterval().dividedBy(SLICES));
                  return DistributedData.withReplicatorMessageAdapter(
                      (ReplicatorMessageAdapter<Command, CodeShard> adapter) -> new CodeSweep(context, adapter, settings, clockMillis, stats));
                }));
  }

  private CodeSweep(
      ActorContext<Command> context,
      ReplicatorMessageAdapter<Command, CodeShard> replicator,
      RelaySettings settings,
      LongSupplier clock,
      CodeShardStats stats) {
    super(context);
    this.replicator = replicator;
    this.cluster = Cluster.get(context.getSystem());
    this.clock = clock;
    this.graceMillis = settings.codeSweepInterval().toMillis();
    this.stats = stats;
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Tick.class, this::onTick)
        .onMessage(ShardRead.class, this::onShardRead)
        .onMessage(Ignored.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onTick(Tick tick) {
    int slice = nextSlice;
    nextSlice = (slice + 1) % SLICES;
    List<Address> sweepers = sweepers();
    int self = sweepers.indexOf(cluster.selfMember().address());
    for (int i = slice; i < RelaySettings.CODE_SHARDS; i += SLICES) {
      int index = i;
      // alone, or not Up: this node prunes every shard it holds
      boolean prune = self < 0 || index % sweepers.size() == self;
      replicator.askGet(
          replyTo -> new Replicator.Get<>(CodeShard.key(index), Replicator.readLocal(), replyTo),
          response -> new ShardRead(index, prune, response));
    }
    stats.sweptSlice();
    return this;
  }

  /** The Up members' addresses in address order: shard {@code i} is pruned by the one at {@code i} modulo their number. */
  private List<Address> sweepers() {
    List<Address> up = new ArrayList<>();
    for (Member member : cluster.state().getMembers()) {
      if (member.status() == MemberStatus.up()) {
        up.add(member.address());
      }
    }
    up.sort(Member.addressOrdering());
    return up;
  }

  private Behavior<Command> onShardRead(ShardRead read) {
    if (!(read.response() instanceof Replicator.GetSuccess<CodeShard> success)) {
      stats.record(read.index(), 0, 0);
      return this;
    }
    long now = clock.getAsLong();
    CodeShard shard = success.dataValue();
    stats.record(read.index(), shard.entries().size() - shard.expiredAt(now), shard.horizon() > now ? shard.horizon() - now : 0);
    long horizon = now - graceMillis;
    if (read.prune() && shard.expiredAt(horizon) > 0) {
      stats.pruned();
      replicator.askUpdate(
          replyTo -> new Replicator.Update<>(success.key(), CodeShard.EMPTY, Replicator.writeLocal(), replyTo, replica -> replica.prunedTo(horizon)),
          Ignored::new);
    }
    return this;
  }
}
