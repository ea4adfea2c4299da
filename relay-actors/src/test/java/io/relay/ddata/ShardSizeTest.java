package io.relay.ddata;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.RelaySettings;
import io.relay.codes.CodeEntry;
import io.relay.codes.CodeGrant;
import io.relay.codes.CodeShard;
import io.relay.codes.CodeStore;
import io.relay.deny.BookingState;
import io.relay.deny.DenyCapacity;
import io.relay.testing.ShardSizing;
import io.relay.testing.TestClusterConfig;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.zip.GZIPInputStream;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.UniqueAddress;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.ReplicatedData;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The sizing of the replicated maps in docs/cluster.md, checked with Pekko's own serializer: a deny
 * list shard at its capacity and a code shard at the fullest the assumed admission rate makes it,
 * both with entries of the largest size, stay well under Artery's maximum frame size. Pekko
 * gzips a deny map; these bounds use its uncompressed size, what incompressible ids would cost.
 * A code shard's serializer does not compress.
 */
class ShardSizeTest {
  /** Canonical hostnames up to this long (IPv6 pod addresses are 39). */
  private static final int HOSTNAME = 64;
  /** The admission rate the code shards are sized for, cluster-wide. */
  private static final int CODES_PER_SECOND = 3_000;
  /**
   * An unredeemed code stays until the second sweep after its expiry: code-ttl plus twice the
   * code-sweep-interval (one interval of clock skew tolerated, one for the sweep to come round).
   */
  private static final int CODE_LIFETIME_SECONDS = 30 + 2 * 10;

  private static final ActorTestKit KIT =
      ActorTestKit.create(
          "relay",
          TestClusterConfig.get());
  private static final long FRAME = KIT.system().settings().config().getBytes("pekko.remote.artery.advanced.maximum-frame-size");

  private final Random random = new Random(13);
  private final List<SelfUniqueAddress> writers = new ArrayList<>();

  ShardSizeTest() {
    for (int i = 0; i < 3; i++) {
      writers.add(new SelfUniqueAddress(new UniqueAddress(new Address("pekko", "relay", "h".repeat(HOSTNAME), 25520 + i), random.nextLong())));
    }
  }

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aDenyShardAtItsCapacityTakesUnderAQuarterOfAFrame() {
    int entries = DenyCapacity.DEFAULT.perShard();
    long expiresAt = System.currentTimeMillis() / 1000 + 365L * 86_400;
    long bytes = rawSize(fill(entries, i -> new BookingState(true, expiresAt + i), DenyCapacity.MAX_BOOKING_ID_BYTES));
    report("deny shard", entries, bytes);
    assertTrue(bytes <= FRAME / 4, "a full deny shard takes " + bytes + " bytes of a " + FRAME + "-byte frame");
  }

  @Test
  void aCodeShardAtTheAssumedAdmissionRateTakesUnderTwoFifthsOfAFrame() {
    int entries = ShardSizing.fullestShard(CODES_PER_SECOND * CODE_LIFETIME_SECONDS, RelaySettings.CODE_SHARDS);
    List<String> scopes = List.of("read", "write", "relay:admin", "relay:stats");
    long expiresAt = System.currentTimeMillis();
    ActorRef<CodeStore.Command> issuer =
        ActorRefResolver.get(KIT.system())
            .resolveActorRef("pekko://relay@" + "h".repeat(HOSTNAME) + ":25520/user/codes#-1234567890");
    CodeShard shard = CodeShard.EMPTY;
    for (int i = 0; i < entries; i++) {
      shard =
          shard.put(
              text(32),
              new CodeEntry(
                  new CodeGrant(text(256), scopes, text(DenyCapacity.MAX_BOOKING_ID_BYTES), expiresAt / 1000, expiresAt + i),
                  issuer));
    }
    long bytes = serializedSize(shard.resetDelta());
    report("code shard", entries, bytes);
    assertTrue(bytes <= FRAME * 2 / 5, "the fullest code shard takes " + bytes + " bytes of a " + FRAME + "-byte frame");
  }

  @Test
  void aDeltaOfOneCodeTakesUnderAKibibyte() {
    long expiresAt = System.currentTimeMillis();
    ActorRef<CodeStore.Command> largeIssuer =
        ActorRefResolver.get(KIT.system())
            .resolveActorRef("pekko://relay@" + "h".repeat(HOSTNAME) + ":25520/user/codes#-1234567890");
    ActorRef<CodeStore.Command> typicalIssuer =
        ActorRefResolver.get(KIT.system()).resolveActorRef("pekko://relay@10.0.12.34:25520/user/codes#-1234567890");
    CodeGrant largest =
        new CodeGrant(text(256), List.of("read", "write", "relay:admin", "relay:stats"), text(DenyCapacity.MAX_BOOKING_ID_BYTES), expiresAt / 1000, expiresAt);
    CodeGrant typical = new CodeGrant(text(30), List.of("read", "write"), text(36), expiresAt / 1000, expiresAt);
    for (CodeEntry entry : List.of(new CodeEntry(largest, largeIssuer), new CodeEntry(typical, typicalIssuer))) {
      CodeShard delta = CodeShard.EMPTY.put(text(32), entry).deltaData().orElseThrow();
      long bytes = serializedSize(delta);
      report(entry.grant() == largest ? "delta of one code, largest" : "delta of one code, typical", 1, bytes);
      assertTrue(bytes <= 1024, "a delta of one code takes " + bytes + " bytes");
    }
  }

  /** A map of {@code entries} entries with keys of {@code keyLength} random characters, written by three nodes. */
  private <V> LWWMap<String, V> fill(int entries, Function<Integer, V> value, int keyLength) {
    LWWMap<String, V> map = LWWMap.create();
    for (int i = 0; i < entries; i++) {
      map = map.put(writers.get(i % writers.size()), text(keyLength), value.apply(i));
    }
    return map;
  }

  private String text(int length) {
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append((char) ('!' + random.nextInt(94)));
    }
    return text.toString();
  }

  /** The shard's serialized size (its serializer does not compress). */
  private static long serializedSize(ReplicatedData shard) {
    return SerializationExtension.get(Adapter.toClassic(KIT.system())).serialize(shard).get().length;
  }

  /** The map's serialized size before Pekko's gzip: what it takes on the wire if nothing compresses. */
  private static long rawSize(LWWMap<String, ?> map) {
    byte[] serialized = SerializationExtension.get(Adapter.toClassic(KIT.system())).serialize(map).get();
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(serialized))) {
      return in.readAllBytes().length;
    } catch (IOException e) {
      throw new UncheckedIOException("Pekko gzips replicated maps", e);
    }
  }

  private static void report(String what, int entries, long bytes) {
    System.out.printf(
        "%s: %d entries, %d bytes (%d per entry), %.0f %% of the %d-byte frame%n",
        what, entries, bytes, bytes / entries, 100.0 * bytes / FRAME, FRAME);
  }
}
