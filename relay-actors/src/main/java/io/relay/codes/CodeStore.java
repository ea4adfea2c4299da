package io.relay.codes;

import io.relay.RelaySettings;
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
 * <p>Issuing writes with WriteMajority before answering; redeeming reads the local replica, falls
 * back to ReadMajority, removes the code and remembers it locally until it would have expired, so
 * this node never accepts it twice. Expired codes are swept periodically.
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

  /** Why a code was refused; each is answered 401 before the upgrade. */
  public enum Reason {
    UNKNOWN,
    USED,
    EXPIRED,
    WRONG_TOPIC
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

  private enum Sweep implements Command {
    INSTANCE
  }

  private record SweepShard(Replicator.GetResponse<LWWMap<String, CodeGrant>> response)
      implements Command {}

  private final ReplicatorMessageAdapter<Command, LWWMap<String, CodeGrant>> replicator;
  private final SelfUniqueAddress self;
  private final RelaySettings settings;
  private final LongSupplier clock;
  private final List<Key<LWWMap<String, CodeGrant>>> shards;
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
                          new CodeStore(context, adapter, settings, clockMillis));
                }));
  }

  private CodeStore(
      ActorContext<Command> context,
      ReplicatorMessageAdapter<Command, LWWMap<String, CodeGrant>> replicator,
      RelaySettings settings,
      LongSupplier clock) {
    super(context);
    this.replicator = replicator;
    this.settings = settings;
    this.clock = clock;
    this.self = DistributedData.get(context.getSystem()).selfUniqueAddress();
    this.shards =
        java.util.stream.IntStream.range(0, RelaySettings.CODE_SHARDS)
            .mapToObj(i -> LWWMapKey.<String, CodeGrant>create("codes-" + i))
            .toList();
  }

  static int shardOf(String code) {
    return Math.floorMod(code.hashCode(), RelaySettings.CODE_SHARDS);
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
    remove(redeem.code());
    if (grant.codeExpiresAt() <= clock.getAsLong()) {
      redeem.replyTo().tell(new Rejected(Reason.EXPIRED));
    } else {
      spent.put(redeem.code(), grant.codeExpiresAt());
      redeem.replyTo().tell(new Redeemed(grant));
    }
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
      replicator.askUpdate(
          replyTo ->
              new Replicator.Update<>(
                  success.key(),
                  LWWMap.create(),
                  Replicator.writeLocal(),
                  replyTo,
                  map -> {
                    LWWMap<String, CodeGrant> result = map;
                    for (String code : expired) {
                      result = result.remove(self, code);
                    }
                    return result;
                  }),
          Ignored::new);
    }
    return this;
  }
}
