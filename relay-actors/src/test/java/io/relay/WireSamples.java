package io.relay;

import io.relay.codes.CodeEntry;
import io.relay.codes.CodeGrant;
import io.relay.codes.CodeShard;
import io.relay.codes.CodeStore;
import io.relay.deny.BookingState;
import io.relay.deny.Cancel;
import io.relay.deny.ListChange;
import io.relay.topic.Claim;
import io.relay.topic.ClaimAnnouncement;
import io.relay.topic.ClusterEvent;
import io.relay.topic.ConnectionReport;
import io.relay.topic.TopicRegistry;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.LWWRegister;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;

/**
 * One representative instance of every message and replicated value that crosses nodes: every
 * field set, no default values, actor references resolved from fixed paths and replicated maps
 * written by fixed nodes at fixed timestamps, so that their serialized bytes are the same in every
 * run. {@link WireFormatsTest} holds each to its recorded bytes.
 */
final class WireSamples {
  /** A sample named for its fixture files ({@code wire/<name>.v<N>.bin}), of the bound type {@code type}. */
  record Sample(String name, Class<?> type, Object value) {}

  private static final String NODE = "pekko://relay@10.0.0.1:25520";
  private static final long CODE_EXPIRES_AT = 1_800_000_030_123L;
  private static final long TOKEN_EXPIRES_AT = 1_800_003_600L;

  private WireSamples() {}

  static List<Sample> all(ActorRefResolver resolver) {
    List<Sample> samples = new ArrayList<>();
    ActorRef<Object> topics = resolver.resolveActorRef(NODE + "/user/topics#1234567890");
    ActorRef<Object> confirmations = resolver.resolveActorRef(NODE + "/user/deny-list/$a#-987654321");
    ActorRef<CodeStore.Command> issuer = resolver.resolveActorRef(NODE + "/user/codes#-1234567890");
    ActorRef<CodeStore.Command> otherIssuer = resolver.resolveActorRef("pekko://relay@10.0.0.2:25520/user/codes#555");
    ActorRef<Object> asker = resolver.resolveActorRef("pekko://relay@10.0.0.2:25520/temp/codes$b#42");
    BookingState denied = new BookingState(true, 1_800_086_400L);
    CodeGrant grant = new CodeGrant("lab/pendulum-3", List.of("read", "write"), "booking-7f3a", TOKEN_EXPIRES_AT, CODE_EXPIRES_AT);
    ConnectionReport.Stats stats =
        new ConnectionReport.Stats(new ConnectionReport.Direction(0.25, 812.5, 24.125), new ConnectionReport.Direction(1.5, 64.0, 2.75), 3);
    ConnectionReport report = new ConnectionReport("lab/pendulum-3", NODE, "booking-7f3a", true, false,
        "2027-01-15T09:30:00.123Z", "2027-01-15T10:30:00Z", "192.0.2.17:51234", "Mozilla/5.0 (X11; Linux x86_64)",
        List.of("read", "write"), stats);
    ClusterEvent event = new ClusterEvent("2027-01-15T09:30:01.5Z", NODE, "claim", "lab/pendulum-3", "first connection here; claimed with stamp 1800000000456");

    // Jackson CBOR: the types that implement CborSerializable.
    samples.add(sample(new Cancel("booking-7f3a")));
    samples.add(sample(new ListChange("booking-7f3a", denied, 17, narrow(confirmations))));
    samples.add(sample(new ListChange.Confirmed(17, "pekko://relay@10.0.0.3:25520")));
    samples.add(sample(denied));
    samples.add(sample(new Claim("lab/pendulum-3", NODE, 1_800_000_000_456L)));
    samples.add(sample(new TopicRegistry.Report(narrow(asker))));
    samples.add(sample(new TopicRegistry.NodeReport(NODE, List.of(report), List.of(event), 2, 3)));
    samples.add(sample(report));
    samples.add(sample(stats));
    samples.add(sample(stats.tx()));
    samples.add(sample(event));
    samples.add(sample(grant));

    // The relay's own serializers.
    samples.add(sample(CodeShard.EMPTY
        .put("bZ1TG2LYZQ-gk9mBsm8YDgAAAAAAAAAq", new CodeEntry(grant, issuer))
        .put("Qx7vR0aLk2-pWcN5eUj3hQAAAAAAAAAr", new CodeEntry(
            new CodeGrant("lab/stats", List.of("read"), "", TOKEN_EXPIRES_AT + 1, CODE_EXPIRES_AT + 1), otherIssuer))
        .prunedTo(1_800_000_000_000L)
        .resetDelta()));
    samples.add(sample(new CodeStore.Claim("bZ1TG2LYZQ-gk9mBsm8YDgAAAAAAAAAq", CODE_EXPIRES_AT, narrow(asker))));
    samples.add(sample(new CodeStore.ClaimAnswer(true)));
    samples.add(sample(new CodeStore.ClaimUnseen("bZ1TG2LYZQ-gk9mBsm8YDgAAAAAAAAAq", "lab/pendulum-3", narrow(asker))));
    samples.add(sample(new CodeStore.Redeemed(grant)));
    // A refusal is its reason's position: one fixture each, so that a reordered reason fails.
    for (CodeStore.Reason reason : CodeStore.Reason.values()) {
      samples.add(new Sample(name(CodeStore.Rejected.class) + "-" + reason, CodeStore.Rejected.class, new CodeStore.Rejected(reason)));
    }
    samples.add(sample(new ClaimAnnouncement(NODE, List.of(
        new Claim("lab/pendulum-3", NODE, 1_800_000_000_456L),
        new Claim("lab/stats", "pekko://relay@10.0.0.2:25520", 1_800_000_000_789L)))));

    // Pekko's serializer of the deny list's maps, with our values inside: a map and a delta.
    samples.add(new Sample("deny.LWWMap", LWWMap.class, denyMap()));
    samples.add(new Sample("deny.LWWMap-delta", LWWMap.class,
        LWWMap.<String, BookingState>create().put(writer("10.0.0.2", 2), "booking-9c01", denied, at(1_800_000_000_002L))
            .delta().get()));
    return samples;
  }

  /** A deny map written by two nodes at fixed timestamps: one booking denied, one allowed. */
  static LWWMap<String, BookingState> denyMap() {
    return LWWMap.<String, BookingState>create()
        .put(writer("10.0.0.1", 1), "booking-7f3a", new BookingState(true, 1_800_086_400L), at(1_800_000_000_001L))
        .put(writer("10.0.0.2", 2), "booking-9c01", new BookingState(false, 1_800_172_800L), at(1_800_000_000_002L))
        .resetDelta();
  }

  /** The fixture name of a type: its name under {@code io.relay}, nested names joined by dots. */
  static String name(Class<?> type) {
    return type.getName().substring("io.relay.".length()).replace('$', '.');
  }

  private static Sample sample(Object value) {
    return new Sample(name(value.getClass()), value.getClass(), value);
  }

  private static SelfUniqueAddress writer(String host, long uid) {
    return new SelfUniqueAddress(new UniqueAddress(new Address("pekko", "relay", host, 25520), uid));
  }

  /** A clock that writes {@code timestamp}, so a map's registers serialize the same in every run. */
  private static LWWRegister.Clock<BookingState> at(long timestamp) {
    return (current, value) -> timestamp;
  }

  @SuppressWarnings("unchecked")
  private static <T> ActorRef<T> narrow(ActorRef<?> ref) {
    return (ActorRef<T>) ref;
  }
}
