package io.relay.ddata;

import java.util.List;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.ddata.Key;
import org.apache.pekko.cluster.ddata.LWWMap;
import org.apache.pekko.cluster.ddata.SelfUniqueAddress;
import org.apache.pekko.cluster.ddata.typed.javadsl.Replicator;

/** Helpers for the fixed sets of replicated LWWMaps that hold codes and the deny list. */
public final class ReplicatedMaps {
  private ReplicatedMaps() {}

  /** An update that removes {@code keys} from the local replica (the sweep of expired entries). */
  public static <V> Replicator.Update<LWWMap<String, V>> removeLocally(
      Key<LWWMap<String, V>> key,
      List<String> keys,
      SelfUniqueAddress self,
      ActorRef<Replicator.UpdateResponse<LWWMap<String, V>>> replyTo) {
    return new Replicator.Update<>(
        key,
        LWWMap.create(),
        Replicator.writeLocal(),
        replyTo,
        map -> {
          LWWMap<String, V> result = map;
          for (String entry : keys) {
            result = result.remove(self, entry);
          }
          return result;
        });
  }
}
