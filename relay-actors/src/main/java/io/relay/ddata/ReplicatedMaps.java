package io.relay.ddata;

import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;

/** Helpers for the fixed sets of replicated shards: the shard of a key (codes and the deny list), and the deny list's sweep. */
public final class ReplicatedMaps {
  private ReplicatedMaps() {}

  /**
   * The shard, of {@code shards}, that holds {@code key}: its {@link String#hashCode()} (the same on
   * every JVM) spread by MurmurHash3's finalizer, so that keys alike in their last characters
   * (booking-1, booking-2, ...) land on unrelated shards.
   */
  public static int shardOf(String key, int shards) {
    int h = key.hashCode();
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    h *= 0xc2b2ae35;
    h ^= h >>> 16;
    return Math.floorMod(h, shards);
  }

  /**
   * An update that removes from the local replica those of {@code keys} whose value there is
   * still {@code expired} (the sweep of expired entries: a key the sweep found expired may have
   * been written again since, by this node or another).
   */
  public static <V> Replicator.Update<LWWMap<String, V>> removeLocally(
      Key<LWWMap<String, V>> key,
      List<String> keys,
      Predicate<V> expired,
      SelfUniqueAddress self,
      ActorRef<Replicator.UpdateResponse<LWWMap<String, V>>> replyTo) {
    return new Replicator.Update<>(
        key,
        LWWMap.create(),
        Replicator.writeLocal(),
        replyTo,
        map -> {
          Map<String, V> current = map.getEntries();
          LWWMap<String, V> result = map;
          for (String entry : keys) {
            V value = current.get(entry);
            if (value != null && expired.test(value)) {
              result = result.remove(self, entry);
            }
          }
          return result;
        });
  }
}
