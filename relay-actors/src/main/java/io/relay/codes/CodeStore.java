package io.relay.codes;

import io.relay.RelaySettings;
import io.relay.ddata.ReplicatedMaps;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMapKey;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;

/**
 * One-time access codes in Distributed Data, spread over a fixed set of {@link
 * RelaySettings#CODE_SHARDS} LWWMaps by hash of the code.
 *
 * <p>Issuing writes with WriteMajority before answering. Redeeming reads the local replica (falling
 * back to ReadMajority, so a node that has not yet received a code by gossip still finds it), then
 * records "redeemed by this node" with WriteMajority in a second fixed set of maps and reads those
 * back with ReadMajority: since any two majorities overlap, of two nodes redeeming the same code
 * at once at least one sees the other's record, and a node accepts only when it sees no other.
 * A code is therefore accepted at most once cluster-wide; when two nodes race, both may refuse
 * (the clients fetch new codes). The node also remembers codes it redeemed until they would have
 * expired. Expired codes and redemption records are swept periodically.
 */
public final class CodeStore extends AbstractBehavior<CodeStore.Command> {

  /** Messages the code store understands. */
  public sealed interface Command {}

  /** Stores a new code; answers once a majority holds it. */
  public record Issue(String code, CodeGrant grant, ActorRef<Issued> replyTo) implements Command {}

  /** Whether an issued code was stored on a majority of nodes. */
  public enum Issued {
    STORED,
    UNAVAILABLE
  }

  /** Exchanges a code presented for {@code topic}. */
  public record Redeem(String code, String topic, ActorRef<Redemption> replyTo)
      implements Command {}

  /** The outcome of a redemption. */
  public sealed interface Redemption {}

  public record Redeemed(CodeGrant grant) implements Redemption {}

  public record Rejected(Reason reason) implements Redemption {}

  /** Why a code was refused: 401 before the upgrade, except UNAVAILABLE (503). */
  public enum Reason {
    UNKNOWN,
    USED,
    EXPIRED,
    WRONG_TOPIC,
    /** No majority could record the redemption in time. */
    UNAVAILABLE
  }

  private record IssueResponse(
      Replicator.UpdateResponse<LWWMap<String, CodeGrant>> response, ActorRef<Issued> replyTo)
      implements Command {}

  private record Lookup(
      Replicator.GetResponse<LWWMap<String, CodeGrant>> response,
      Redeem redeem,
      boolean majority)
      implements Command {}

  private record Ignored(Object response) implements Command {}

  private record Recorded(
      Replicator.UpdateResponse<LWWMap<String, Long>> response, Redeem redeem, CodeGrant grant)
      implements Command {}

  private record Checked(
      Replicator.GetResponse<LWWMap<String, Long>> response, Redeem redeem, CodeGrant grant)
      implements Command {}

  private record SweepRedemptions(Replicator.GetResponse<LWWMap<String, Long>> response)
      implements Command {}

  private enum Sweep implements Command {
    INSTANCE
  }

  private record SweepShard(Replicator.GetResponse<LWWMap<String, CodeGrant>> response)
      implements Command {}

  private final ReplicatorMessageAdapter<Command, LWWMap<String, CodeGrant>> replicator;
  private final ReplicatorMessageAdapter<Command, LWWMap<String, Long>> redemptionReplicator;
  private final SelfUniqueAddress self;
  private final RelaySettings settings;
  private final LongSupplier clock;
  private final List<Key<LWWMap<String, CodeGrant>>> shards;
  private final List<Key<LWWMap<String, Long>>> redemptionShards;
  /** Codes redeemed (or being redeemed) here, with when they would have expired. */
  private final Map<String, Long> spent = new HashMap<>();

  public static Behavior<Command> create(RelaySettings settings, LongSupplier clockMillis) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Sweep.INSTANCE, settings.codeSweepInterval());
                  return DistributedData.withReplicatorMessageAdapter(
                      (ReplicatorMessageAdapter<Command, LWWMap<String, CodeGrant>> adapter) ->
                          DistributedData.withReplicatorMessageAdapter(
                              (ReplicatorMessageAdapter<Command, LWWMap<String, Long>> redemptions) ->
                                  new CodeStore(context, adapter, redemptions, settings, clockMillis)));
                }));
  }

  private CodeStore(
      ActorContext<Command> context,
      ReplicatorMessageAdapter<Command, LWWMap<String, CodeGrant>> replicator,
      ReplicatorMessageAdapter<Command, LWWMap<String, Long>> redemptionReplicator,
      RelaySettings settings,
      LongSupplier clock) {
    super(context);
    this.replicator = replicator;
    this.redemptionReplicator = redemptionReplicator;
    this.settings = settings;
    this.clock = clock;
    this.self = DistributedData.get(context.getSystem()).selfUniqueAddress();
    this.shards =
        java.util.stream.IntStream.range(0, RelaySettings.CODE_SHARDS)
            .mapToObj(i -> LWWMapKey.<String, CodeGrant>create("codes-" + i))
            .toList();
    this.redemptionShards =
        java.util.stream.IntStream.range(0, RelaySettings.CODE_SHARDS)
            .mapToObj(i -> LWWMapKey.<String, Long>create("redemptions-" + i))
            .toList();
  }

  static int shardOf(String code) {
    return ReplicatedMaps.shardOf(code, RelaySettings.CODE_SHARDS);
  }

  @Override
  public Receive<Command> createReceive() {
    return newReceiveBuilder()
        .onMessage(Issue.class, this::onIssue)
        .onMessage(IssueResponse.class, this::onIssueResponse)
        .onMessage(Redeem.class, this::onRedeem)
        .onMessage(Lookup.class, this::onLookup)
        .onMessage(Sweep.class, this::onSweep)
        .onMessage(SweepShard.class, this::onSweepShard)
        .onMessage(Recorded.class, this::onRecorded)
        .onMessage(Checked.class, this::onChecked)
        .onMessage(SweepRedemptions.class, this::onSweepRedemptions)
        .onMessage(Ignored.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onIssue(Issue issue) {
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                shards.get(shardOf(issue.code())),
                LWWMap.create(),
                new Replicator.WriteMajority(settings.replicationTimeout()),
                replyTo,
                map -> map.put(self, issue.code(), issue.grant())),
        response -> new IssueResponse(response, issue.replyTo()));
    return this;
  }

  private Behavior<Command> onIssueResponse(IssueResponse response) {
    boolean stored = response.response() instanceof Replicator.UpdateSuccess;
    response.replyTo().tell(stored ? Issued.STORED : Issued.UNAVAILABLE);
    return this;
  }

  private Behavior<Command> onRedeem(Redeem redeem) {
    if (spent.containsKey(redeem.code())) {
      redeem.replyTo().tell(new Rejected(Reason.USED));
      return this;
    }
    spent.put(redeem.code(), clock.getAsLong() + settings.codeTtl().toMillis());
    lookup(redeem, false);
    return this;
  }

  private void lookup(Redeem redeem, boolean majority) {
    Replicator.ReadConsistency consistency =
        majority ? new Replicator.ReadMajority(settings.replicationTimeout()) : Replicator.readLocal();
    replicator.askGet(
        replyTo -> new Replicator.Get<>(shards.get(shardOf(redeem.code())), consistency, replyTo),
        response -> new Lookup(response, redeem, majority));
  }

  private Behavior<Command> onLookup(Lookup lookup) {
    Redeem redeem = lookup.redeem();
    CodeGrant grant = null;
    if (lookup.response() instanceof Replicator.GetSuccess<LWWMap<String, CodeGrant>> success) {
      grant = success.dataValue().getEntries().get(redeem.code());
    }
    if (grant == null) {
      if (!lookup.majority()) {
        lookup(redeem, true);
      } else {
        spent.remove(redeem.code());
        redeem.replyTo().tell(new Rejected(Reason.UNKNOWN));
      }
      return this;
    }
    if (!grant.topic().equals(redeem.topic())) {
      spent.remove(redeem.code());
      redeem.replyTo().tell(new Rejected(Reason.WRONG_TOPIC));
      return this;
    }
    if (grant.codeExpiresAt() <= clock.getAsLong()) {
      remove(redeem.code());
      redeem.replyTo().tell(new Rejected(Reason.EXPIRED));
      return this;
    }
    spent.put(redeem.code(), grant.codeExpiresAt());
    CodeGrant found = grant;
    redemptionReplicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                redemptionShards.get(shardOf(redeem.code())),
                LWWMap.create(),
                new Replicator.WriteMajority(settings.replicationTimeout()),
                replyTo,
                map -> map.put(self, redemptionKey(redeem.code()), found.codeExpiresAt())),
        response -> new Recorded(response, redeem, found));
    return this;
  }

  private String redemptionKey(String code) {
    return code + "|" + self.uniqueAddress().address();
  }

  private Behavior<Command> onRecorded(Recorded recorded) {
    if (!(recorded.response() instanceof Replicator.UpdateSuccess)) {
      recorded.redeem().replyTo().tell(new Rejected(Reason.UNAVAILABLE));
      return this;
    }
    redemptionReplicator.askGet(
        replyTo ->
            new Replicator.Get<>(
                redemptionShards.get(shardOf(recorded.redeem().code())),
                new Replicator.ReadMajority(settings.replicationTimeout()),
                replyTo),
        response -> new Checked(response, recorded.redeem(), recorded.grant()));
    return this;
  }

  private Behavior<Command> onChecked(Checked checked) {
    Redeem redeem = checked.redeem();
    if (!(checked.response() instanceof Replicator.GetSuccess<LWWMap<String, Long>> success)) {
      redeem.replyTo().tell(new Rejected(Reason.UNAVAILABLE));
      return this;
    }
    String prefix = redeem.code() + "|";
    String ours = redemptionKey(redeem.code());
    boolean redeemedElsewhere =
        success.dataValue().getEntries().keySet().stream().anyMatch(k -> k.startsWith(prefix) && !k.equals(ours));
    remove(redeem.code());
    redeem.replyTo().tell(redeemedElsewhere ? new Rejected(Reason.USED) : new Redeemed(checked.grant()));
    return this;
  }

  private void remove(String code) {
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                shards.get(shardOf(code)),
                LWWMap.create(),
                Replicator.writeLocal(),
                replyTo,
                map -> map.remove(self, code)),
        Ignored::new);
  }

  private Behavior<Command> onSweep(Sweep sweep) {
    long now = clock.getAsLong();
    spent.values().removeIf(expiresAt -> expiresAt <= now);
    for (Key<LWWMap<String, CodeGrant>> shard : shards) {
      replicator.askGet(
          replyTo -> new Replicator.Get<>(shard, Replicator.readLocal(), replyTo), SweepShard::new);
    }
    for (Key<LWWMap<String, Long>> shard : redemptionShards) {
      redemptionReplicator.askGet(
          replyTo -> new Replicator.Get<>(shard, Replicator.readLocal(), replyTo), SweepRedemptions::new);
    }
    return this;
  }

  private Behavior<Command> onSweepRedemptions(SweepRedemptions sweep) {
    if (!(sweep.response() instanceof Replicator.GetSuccess<LWWMap<String, Long>> success)) {
      return this;
    }
    long now = clock.getAsLong();
    List<String> expired =
        success.dataValue().getEntries().entrySet().stream()
            .filter(e -> e.getValue() <= now)
            .map(Map.Entry::getKey)
            .toList();
    if (!expired.isEmpty()) {
      redemptionReplicator.askUpdate(
          replyTo -> ReplicatedMaps.removeLocally(success.key(), expired, self, replyTo), Ignored::new);
    }
    return this;
  }

  private Behavior<Command> onSweepShard(SweepShard sweep) {
    if (!(sweep.response() instanceof Replicator.GetSuccess<LWWMap<String, CodeGrant>> success)) {
      return this;
    }
    long now = clock.getAsLong();
    List<String> expired =
        success.dataValue().getEntries().entrySet().stream()
            .filter(e -> e.getValue().codeExpiresAt() <= now)
            .map(Map.Entry::getKey)
            .toList();
    if (!expired.isEmpty()) {
      replicator.askUpdate(replyTo -> ReplicatedMaps.removeLocally(success.key(), expired, self, replyTo), Ignored::new);
    }
    return this;
  }
}
