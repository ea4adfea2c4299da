package io.relay.harness;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;

/** What the real-partition scenarios share: their precondition and how they read membership. */
final class Partitions {
  private Partitions() {}

  /** Skips the calling test class, saying why, where network namespaces cannot be made here. */
  static void assumeNamespaces() {
    PodNetwork.unavailable().ifPresent(why -> Assumptions.abort("real network partitions need network namespaces: " + why));
  }

  /** {@code nodes}' addresses, each {@code Up}: what {@link NodeProcess#members} shows of a whole cluster. */
  static Map<String, String> allUp(List<NodeProcess> nodes) {
    Map<String, String> up = new TreeMap<>();
    nodes.forEach(n -> up.put(n.address(), "Up"));
    return up;
  }

  /** Milliseconds since {@code start} (System.nanoTime). */
  static long since(long start) {
    return (System.nanoTime() - start) / 1_000_000;
  }
}
