package io.relay.codes;

import io.relay.Ask;
import io.relay.RelaySettings;
import io.relay.ddata.ReplicatedMaps;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.cluster.ClusterEvent.CurrentClusterState;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
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
 * <p>Issuing mints the code (128 bits of randomness) and its expiry ({@code relay.code-ttl}) and
 * writes it with WriteMajority before answering. Redeeming reads the local replica (falling
 * back to ReadMajority, so a node that has not yet received a code by gossip still finds it), and
 * then asks the code's issuer for it: the issuer alone decides a code's single use, in memory, and
 * answers "yes" to the first claim only. A code is therefore accepted at most once cluster-wide,
 * with one small message (none when the issuer redeems) instead of quorum writes and reads. When
 * the issuer has left the cluster, is unreachable or does not answer in time, the code is refused
 * (the client fetches a new one); the issuer remembers claimed codes until they would have
 * expired. Codes stay in the shards until the sweep after they expire, used or not: removing a
 * used code would replicate one more change per admission and protect nothing, since its issuer
 * refuses a second claim. The sweep advances the horizon of each shard holding an expired code,
 * which removes them on every node.
 *
 * <p>Why one actor of over 300 lines: issuing, redeeming, the issuer's answers to claims and the
 * sweep all work on the same replicated shards and the same record of claimed codes; the shard's
 * data type and its serializer are classes beside it.
 */
public final class CodeStore extends AbstractBehavior<CodeStore.Command> {

  /** Messages the code store understands. */
  public sealed interface Command {}

  /**
   * Mints a code for {@code topic} with what a token grants ({@code scopes}, {@code bookingId}, its
   * {@code exp} in epoch seconds) and stores it, valid for {@code relay.code-ttl}; answers once a
   * majority holds it.
   */
  public record Issue(String topic, List<String> scopes, String bookingId, long tokenExpiresAt, ActorRef<Issued> replyTo)
      implements Command {}

  /** What became of an {@link Issue}. */
  public sealed interface Issued {}

  /** The code, stored on a majority of nodes. */
  public record Stored(String code) implements Issued {}

  /** Not confirmed by a majority in time: no code. */
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

  /** The issuer's answer to a claim: {@code granted} for the first claim of the code only. */
  public record ClaimAnswer(boolean granted) {}

  private record IssueResponse(
      Replicator.UpdateResponse<CodeShard> response, String code, ActorRef<Issued> replyTo)
      implements Command {}

  private record Lookup(
      Replicator.GetResponse<CodeShard> response,
      Redeem redeem,
      boolean majority)
      implements Command {}

  private record Claimed(Redeem redeem, CodeGrant grant, ClaimAnswer answer) implements Command {}

  private record Ignored(Object response) implements Command {}

  private enum Sweep implements Command {
    INSTANCE
  }

  private record SweepShard(int index, Replicator.GetResponse<CodeShard> response)
      implements Command {}

  private static final int CODE_BYTES = 16;

  private final ReplicatorMessageAdapter<Command, CodeShard> replicator;
  private final SecureRandom random = new SecureRandom();
  private final Cluster cluster;
  private final RelaySettings settings;
  private final LongSupplier clock;
  private final List<Key<CodeShard>> shards;
  /** Codes this node issued that a node has claimed, with when they would have expired. */
  private final Map<String, Long> claimed = new HashMap<>();
  private final CodeShardStats stats;

  public static Behavior<Command> create(RelaySettings settings, LongSupplier clockMillis) {
    return create(settings, clockMillis, new CodeShardStats());
  }

  /** A code store whose sweeps report what they see of the replica to {@code stats}. */
  public static Behavior<Command> create(RelaySettings settings, LongSupplier clockMillis, CodeShardStats stats) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  timers.startTimerWithFixedDelay(Sweep.INSTANCE, settings.codeSweepInterval());
                  return DistributedData.withReplicatorMessageAdapter(
                      (ReplicatorMessageAdapter<Command, CodeShard> adapter) ->
                          new CodeStore(context, adapter, settings, clockMillis, stats));
                }));
  }

  private CodeStore(
      ActorContext<Command> context,
      ReplicatorMessageAdapter<Command, CodeShard> replicator,
      RelaySettings settings,
      LongSupplier clock,
      CodeShardStats stats) {
    super(context);
    this.stats = stats;
    this.replicator = replicator;
    this.settings = settings;
    this.clock = clock;
    this.cluster = Cluster.get(context.getSystem());
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
        .onMessage(Sweep.class, this::onSweep)
        .onMessage(SweepShard.class, this::onSweepShard)
        .onMessage(Ignored.class, ignored -> this)
        .build();
  }

  private Behavior<Command> onIssue(Issue issue) {
    String code = newCode();
    CodeGrant grant =
        new CodeGrant(
            issue.topic(), issue.scopes(), issue.bookingId(), issue.tokenExpiresAt(), clock.getAsLong() + settings.codeTtl().toMillis());
    CodeEntry entry = new CodeEntry(grant, getContext().getSelf());
    replicator.askUpdate(
        replyTo ->
            new Replicator.Update<>(
                shards.get(shardOf(code)),
                CodeShard.EMPTY,
                new Replicator.WriteMajority(settings.replicationTimeout()),
                replyTo,
                shard -> shard.put(code, entry)),
        response -> new IssueResponse(response, code, issue.replyTo()));
    return this;
  }

  /** 128 bits of randomness, URL-safe Base64 without padding (22 characters). */
  private String newCode() {
    byte[] bytes = new byte[CODE_BYTES];
    random.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  private Behavior<Command> onIssueResponse(IssueResponse response) {
    boolean stored = response.response() instanceof Replicator.UpdateSuccess;
    response.replyTo().tell(stored ? new Stored(response.code()) : Unavailable.INSTANCE);
    return this;
  }

  private Behavior<Command> onRedeem(Redeem redeem) {
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
    CodeEntry entry = null;
    if (lookup.response() instanceof Replicator.GetSuccess<CodeShard> success) {
      entry = success.dataValue().get(redeem.code());
    }
    if (entry == null || entry.issuer() == null) {
      if (!lookup.majority()) {
        lookup(redeem, true);
      } else {
        redeem.replyTo().tell(new Rejected(Reason.UNKNOWN));
      }
      return this;
    }
    CodeGrant grant = entry.grant();
    if (!grant.topic().equals(redeem.topic())) {
      redeem.replyTo().tell(new Rejected(Reason.WRONG_TOPIC));
    } else if (grant.codeExpiresAt() <= clock.getAsLong()) {
      redeem.replyTo().tell(new Rejected(Reason.EXPIRED));
    } else if (entry.issuer().equals(getContext().getSelf())) {
      decide(redeem, grant, claim(redeem.code(), grant.codeExpiresAt()));
    } else if (!answers(entry.issuer())) {
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

  /**
   * Whether the issuer can answer: its node is a member, up (or leaving) and reachable. A local
   * reference other than this store is an earlier incarnation of this node, which cannot answer.
   */
  private boolean answers(ActorRef<Command> issuer) {
    Address address = issuer.path().address();
    if (address.hasLocalScope()) {
      return false;
    }
    CurrentClusterState state = cluster.state();
    for (Member member : state.getMembers()) {
      if (member.address().equals(address)) {
        MemberStatus status = member.status();
        boolean serving = status == MemberStatus.up() || status == MemberStatus.weaklyUp() || status == MemberStatus.leaving();
        return serving && !state.getUnreachable().contains(member);
      }
    }
    return false;
  }

  /** As the issuer: grants the first claim of a code only. */
  private boolean claim(String code, long expiresAt) {
    return claimed.putIfAbsent(code, expiresAt) == null;
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

  private Behavior<Command> onSweep(Sweep sweep) {
    long now = clock.getAsLong();
    claimed.values().removeIf(expiresAt -> expiresAt <= now);
    for (int i = 0; i < shards.size(); i++) {
      Key<CodeShard> shard = shards.get(i);
      int index = i;
      replicator.askGet(
          replyTo -> new Replicator.Get<>(shard, Replicator.readLocal(), replyTo), response -> new SweepShard(index, response));
    }
    return this;
  }

  private Behavior<Command> onSweepShard(SweepShard sweep) {
    if (!(sweep.response() instanceof Replicator.GetSuccess<CodeShard> success)) {
      stats.record(sweep.index(), 0);
      return this;
    }
    long now = clock.getAsLong();
    CodeShard shard = success.dataValue();
    int expired = shard.expiredAt(now);
    stats.record(sweep.index(), shard.entries().size() - expired);
    if (expired > 0) {
      replicator.askUpdate(
          replyTo -> new Replicator.Update<>(success.key(), CodeShard.EMPTY, Replicator.writeLocal(), replyTo, replica -> replica.prunedTo(now)),
          Ignored::new);
    }
    return this;
  }
}
