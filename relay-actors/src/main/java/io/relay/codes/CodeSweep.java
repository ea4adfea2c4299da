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
 * holds ({@link CodeShardStats}). Pruning advances a shard's horizon to the node's clock, which
 * removes its expired codes on every node the change reaches.
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
                      (ReplicatorMessageAdapter<Command, CodeShard> adapter) -> new CodeSweep(context, adapter, clockMillis, stats));
                }));
  }

  private CodeSweep(
      ActorContext<Command> context, ReplicatorMessageAdapter<Command, CodeShard> replicator, LongSupplier clock, CodeShardStats stats) {
    super(context);
    this.replicator = replicator;
    this.cluster = Cluster.get(context.getSystem());
    this.clock = clock;
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
      stats.record(read.index(), 0);
      return this;
    }
    long now = clock.getAsLong();
    CodeShard shard = success.dataValue();
    int expired = shard.expiredAt(now);
    stats.record(read.index(), shard.entries().size() - expired);
    if (expired > 0 && read.prune()) {
      stats.pruned();
      replicator.askUpdate(
          replyTo -> new Replicator.Update<>(success.key(), CodeShard.EMPTY, Replicator.writeLocal(), replyTo, replica -> replica.prunedTo(now)),
          Ignored::new);
    }
    return this;
  }
}
