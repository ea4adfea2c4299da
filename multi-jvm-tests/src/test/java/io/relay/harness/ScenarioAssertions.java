package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;

/** Assertions shared by the scenarios: what users must see. */
final class ScenarioAssertions {
  private ScenarioAssertions() {}

  /** Every frame outside a reconnect window arrived exactly once, in order; nobody was left out. */
  static void deliveredAsPromised(Delivery.Summary d) {
    assertTrue(d.framesOwed() > 0, "the scenario carried traffic");
    assertEquals(0, d.framesLostOutsideWindow(), "frames lost outside reconnect windows: " + d.problems());
    assertEquals(0, d.foreign(), "messages of another topic, or not a writer's: " + d.problems());
    assertEquals(0, d.duplicates(), "duplicates: " + d.problems());
    assertEquals(0, d.outOfOrder(), "out of order: " + d.problems());
    assertTrue(d.leftDisconnected().isEmpty(), "left disconnected: " + d.leftDisconnected());
  }

  /** How many participants each topic has, for the convergence check. */
  static Map<String, Integer> expected(Traffic traffic) {
    Map<String, Integer> expected = new HashMap<>();
    traffic.topics().forEach((name, topic) -> expected.put(name, topic.participants().size()));
    return expected;
  }
}
