package io.relay.codes;

import io.relay.Ask;
import io.relay.RelaySettings;
import io.relay.ddata.ReplicatedMaps;
import io.relay.metrics.RelayMetrics;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.typed.javadsl.DistributedData;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;
import org.apache.pekko.cluster.ddata.typed.javadsl.ReplicatorMessageAdapter;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * One-time access codes in Distributed Data, spread over a fixed set of {@link
 * RelaySettings#CODE_SHARDS} {@link CodeShard}s by hash of the code; each entry names the code
 * store that issued it.
 *
 * <p>Issuing mints the code (128 bits of randomness, then the issuing node's unique id) and its
 * expiry ({@code relay.code-ttl}), writes it to this node's replica and answers; gossip brings it
 * to the other nodes. Redeeming reads the local replica and then asks the code's issuer to claim
 * it: the issuer alone decides a code's single use, in memory, and answers "yes" to the first claim
 * only. When the local replica does not hold the code yet, the redeemer finds the issuer by the id
 * in the code and asks it to claim the code from the issuer's own replica, which answers with what
 * the code grants. A code is therefore accepted at most once cluster-wide, with one small message
 * (none when the issuer redeems) and no quorum writes or reads. When the issuer has left the
 * cluster, is unreachable or does not answer in time, the code is refused (the client fetches a
 * new one); the issuer remembers claimed codes until they would have expired, and grants no claim
 * after that. Codes stay in the shards until the second sweep after they expire, used or not: removing a used code would replicate one
 * more change per admission and protect nothing, since its issuer refuses a second claim
 * ({@link CodeSweep} removes expired codes).
 *
 * <p>Issuing, redeeming and the issuer's answers to both kinds of claim work on the same replicated
 * shards and the same record of claimed codes; a code's text ({@link CodeFormat}), finding an
 * issuer ({@link Issuers}), the shard's data type, its serializer and the sweep are classes beside
 * it.
 */
public final class CodeStore extends AbstractBehavior<CodeStore.Command> {

  /** Messages the code store understands. */
  public sealed interface Command {}

  /**
   * Mints a code for {@code topic} with what a token grants ({@code scopes}, {@code bookingId}, its
   * {@code exp} in epoch seconds) and stores it, valid for {@code relay.code-ttl}; answers once this
   * node's replica holds it.
   */
  public record Issue(String topic, List<String> scopes, String bookingId, long tokenExpiresAt, ActorRef<Issued> replyTo)
      implements Command {}

  /** What became of an {@link Issue}. */
  public sealed interface Issued {}

  /** The code, stored in this node's replica. */
  public record Stored(String code) implements Issued {}

  /** Not stored: no code. */
  public enum Unavailable implements Issued {
    INSTANCE
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
    /** The node that issued the code has left the cluster or is unreachable. */
    ISSUER_GONE,
    /** The issuer did not answer in time. */
    UNAVAILABLE
  }

  /** Sent to a code's issuer by the node redeeming it; only the first claim of a code is granted. */
  public record Claim(String code, long expiresAt, ActorRef<ClaimAnswer> replyTo) implements Command {}

  /**
   * The issuer's answer to a claim: {@code granted} for the first claim of the code only, before
   * the code expires by the issuer's clock.
   */
  public record ClaimAnswer(boolean granted) {}

  /**
   * Sent to a code's issuer, found by the id in the code, by a node whose replica does not hold the
   * code yet: the issuer checks the code against its own replica and claims it for {@code topic},
   * answering with what it grants or why not.
   */
  public record ClaimUnseen(String code, String topic, ActorRef<Redemption> replyTo) implements Command {}

  private record IssueResponse(
      Replicator.UpdateResponse<CodeShard> response, String code, ActorRef<Issued> replyTo)
      implements Command {}

  private record Lookup(Replicator.GetResponse<CodeShard> response, Redeem redeem) implements Command {}

  private record Claimed(Redeem redeem, CodeGrant grant, ClaimAnswer answer) implements Command {}

  private record UnseenLookup(Replicator.GetResponse<CodeShard> response, ClaimUnseen claim) implements Command {}

  /** The issuer's answer to a {@link ClaimUnseen}, or null when it did not answer in time. */
  private record ClaimedUnseen(Redeem redeem, Redemption answer) implements Command {}

  /** Forgets the claimed codes that have expired. */
  private enum ForgetExpired implements Command {
    INSTANCE
  }

  private final ReplicatorMessageAdapter<Command, CodeShard> replicator;
  /** This node's unique id, the last part of every code it mints. */
  private final long selfUid;
  private final CodeFormat format;
  private final Issuers issuers;
  private final RelaySettings settings;
  private final LongSupplier clock;
  private final List<Key<CodeShard>> shards;
  /** Codes this node issued that a node has claimed, with when they would have expired. */
  private final Map<String, Long> claimed = new HashMap<>();
  private final RelayMetrics metrics;

  public static Behavior<Command> create(RelaySettings settings, LongSupplier clockMillis) {
    return create(settings, clockMillis, new RelayMetrics());
  }

  /** A code store counting its lookups in {@code metrics}. */
  public static Behavior<Command> create(RelaySettings settings, LongSupplier clockMillis, RelayMetrics metrics) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(ForgetExpired.INSTANCE, settings.codeSweepInterval());
                  return DistributedData.withReplicatorMessageAdapter(
                      (ReplicatorMessageAdapter<Command, CodeShard> adapter) ->
                          new CodeStore(context, adapter, settings, clockMillis, metrics));
                }));
  }

  private CodeStore(
      ActorContext<Command> context,
      ReplicatorMessageAdapter<Command, CodeShard> replicator,
      RelaySettings settings,
      LongSupplier clock,
      RelayMetrics metrics) {
    super(context);
    this.metrics = metrics;
    this.replicator = replicator;
    this.settings = settings;
    this.clock = clock;
    this.selfUid = Cluster.get(context.getSystem()).selfMember().uniqueAddress().longUid();
    this.format = new CodeFormat(selfUid);
    this.issuers = new Issuers(context.getSystem(), context.getSelf().path().toStringWithoutAddress());
    this.shards =
        java.util.stream.IntStream.range(0, RelaySettings.CODE_SHARDS)
            .mapToObj(CodeShard::key)
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
        .onMessage(Claim.class, this::onClaim)
        .onMessage(Claimed.class, this::onClaimed)
        .onMessage(ClaimUnseen.class, this::onClaimUnseen)
        .onMessage(UnseenLookup.class, this::onUnseenLookup)
        .onMessage(ClaimedUnseen.class, this::onClaimedUnseen)
        .onMessage(ForgetExpired.class, this::onForgetExpired)
        .build();
  }

  private Behavior<Command> onIssue(Issue issue) {
    String code = format.newCode();
    CodeGrant grant =
        new CodeGrant(
            issue.topic(), issue.scopes(), issue.bookingId(), issue.tokenExpiresAt(), clock.getAsLong() + settings.codeTtl().toMillis());
    CodeEntry entry = new CodeEntry(grant, getContext().getSelf());
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                shards.get(shardOf(code)),
                CodeShard.EMPTY,
                Replicator.writeLocal(),
                replyTo,
                shard -> {
                  if (grant.codeExpiresAt() <= shard.horizon()) {
                    // a node whose clock is ahead by more than the TTL pruned the shard past this
                    // code's expiry: it would be dropped; refused (503) instead of stored in vain
                    throw new IllegalStateException("the code shard's horizon is ahead of this node's clock");
                  }
                  return shard.put(code, entry);
                }),
        response -> new IssueResponse(response, code, issue.replyTo()));
    return this;
  }

  private Behavior<Command> onIssueResponse(IssueResponse response) {
    boolean stored = response.response() instanceof Replicator.UpdateSuccess;
    response.replyTo().tell(stored ? new Stored(response.code()) : Unavailable.INSTANCE);
    return this;
  }

  private Behavior<Command> onRedeem(Redeem redeem) {
    readLocal(redeem.code(), response -> new Lookup(response, redeem));
    return this;
  }

  /** Reads the shard of {@code code} from this node's replica; {@code then} wraps the answer. */
  private void readLocal(String code, Function<Replicator.GetResponse<CodeShard>, Command> then) {
    replicator.askGet(replyTo -> new Replicator.Get<>(shards.get(shardOf(code)), Replicator.readLocal(), replyTo), then::apply);
  }

  private Behavior<Command> onLookup(Lookup lookup) {
    Redeem redeem = lookup.redeem();
    CodeEntry entry = entryIn(lookup.response(), redeem.code());
    if (entry == null) {
      claimUnseen(redeem);
      return this;
    }
    metrics.codeLookups.labelValues("replica").inc();
    CodeGrant grant = entry.grant();
    Reason refusal = refusal(grant, redeem.topic());
    if (refusal != null) {
      redeem.replyTo().tell(new Rejected(refusal));
    } else if (entry.issuer().equals(getContext().getSelf())) {
      decide(redeem, grant, claim(redeem.code(), grant.codeExpiresAt()));
    } else if (!issuers.answers(entry.issuer(), redeem.code())) {
      redeem.replyTo().tell(new Rejected(Reason.ISSUER_GONE));
    } else {
      Ask.<Command, Command, ClaimAnswer>fromActor(
          getContext(),
          entry.issuer(),
          replyTo -> new Claim(redeem.code(), grant.codeExpiresAt(), replyTo),
          settings.replicationTimeout(),
          (answer, failure) -> new Claimed(redeem, grant, answer));
    }
    return this;
  }

  private static CodeEntry entryIn(Replicator.GetResponse<CodeShard> response, String code) {
    return response instanceof Replicator.GetSuccess<CodeShard> success ? success.dataValue().get(code) : null;
  }

  /** Why a code granting {@code grant} cannot be redeemed for {@code topic} now, or null. */
  private Reason refusal(CodeGrant grant, String topic) {
    if (!grant.topic().equals(topic)) {
      return Reason.WRONG_TOPIC;
    }
    return grant.codeExpiresAt() <= clock.getAsLong() ? Reason.EXPIRED : null;
  }

  /**
   * A code this node's replica does not hold: gossip has not brought it yet, or it is unknown. Its
   * issuer, named by the id in the code, claims it from its own replica.
   */
  private void claimUnseen(Redeem redeem) {
    OptionalLong issuerUid = CodeFormat.issuerOf(redeem.code());
    if (issuerUid.isEmpty() || issuerUid.getAsLong() == selfUid) {
      // not a code, or one this node minted: its replica would hold it
      redeem.replyTo().tell(new Rejected(Reason.UNKNOWN));
      return;
    }
    ActorRef<Command> issuer = issuers.storeOf(issuerUid.getAsLong());
    if (issuer == null) {
      redeem.replyTo().tell(new Rejected(Reason.ISSUER_GONE));
      return;
    }
    metrics.codeLookups.labelValues("issuer").inc();
    Ask.<Command, Command, Redemption>fromActor(
        getContext(),
        issuer,
        replyTo -> new ClaimUnseen(redeem.code(), redeem.topic(), replyTo),
        settings.replicationTimeout(),
        (answer, failure) -> new ClaimedUnseen(redeem, answer));
  }

  private Behavior<Command> onClaimedUnseen(ClaimedUnseen claimed) {
    claimed.redeem().replyTo().tell(claimed.answer() == null ? new Rejected(Reason.UNAVAILABLE) : claimed.answer());
    return this;
  }

  /** As the issuer, for a node whose replica does not hold the code yet. */
  private Behavior<Command> onClaimUnseen(ClaimUnseen claim) {
    readLocal(claim.code(), response -> new UnseenLookup(response, claim));
    return this;
  }

  private Behavior<Command> onUnseenLookup(UnseenLookup lookup) {
    ClaimUnseen claim = lookup.claim();
    CodeEntry entry = entryIn(lookup.response(), claim.code());
    if (entry == null || !entry.issuer().equals(getContext().getSelf())) {
      claim.replyTo().tell(new Rejected(Reason.UNKNOWN));
      return this;
    }
    CodeGrant grant = entry.grant();
    Reason refusal = refusal(grant, claim.topic());
    if (refusal != null) {
      claim.replyTo().tell(new Rejected(refusal));
    } else if (claim(claim.code(), grant.codeExpiresAt())) {
      claim.replyTo().tell(new Redeemed(grant));
    } else {
      claim.replyTo().tell(new Rejected(Reason.USED));
    }
    return this;
  }

  /**
   * As the issuer: grants the first claim of a code only, and none once the code has expired by
   * the issuer's clock, after which it no longer remembers the code's claim ({@link
   * ForgetExpired}): a redeemer whose clock is behind would otherwise be granted a used code again.
   */
  private boolean claim(String code, long expiresAt) {
    return expiresAt > clock.getAsLong() && claimed.putIfAbsent(code, expiresAt) == null;
  }

  private Behavior<Command> onClaim(Claim claim) {
    claim.replyTo().tell(new ClaimAnswer(claim(claim.code(), claim.expiresAt())));
    return this;
  }

  private Behavior<Command> onClaimed(Claimed claimed) {
    if (claimed.answer() == null) {
      claimed.redeem().replyTo().tell(new Rejected(Reason.UNAVAILABLE));
    } else {
      decide(claimed.redeem(), claimed.grant(), claimed.answer().granted());
    }
    return this;
  }

  private void decide(Redeem redeem, CodeGrant grant, boolean granted) {
    if (granted) {
      redeem.replyTo().tell(new Redeemed(grant));
    } else {
      redeem.replyTo().tell(new Rejected(Reason.USED));
    }
  }

  private Behavior<Command> onForgetExpired(ForgetExpired forget) {
    long now = clock.getAsLong();
    claimed.values().removeIf(expiresAt -> expiresAt <= now);
    return this;
  }
}
