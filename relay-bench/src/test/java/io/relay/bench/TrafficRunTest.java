package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TrafficRunTest {
  @Test
  void aStepPassesAtItsRateOnlyWhenItsWritersOfferedIt() {
    // 400/s per topic, 50 topics, 5 s: 100,000 messages intended
    assertTrue(TrafficRun.passes(6.9, 1.0, 100_075, 100_000, 100, 0.95), "on time, delivered, at the rate");
    assertFalse(TrafficRun.passes(120, 1.0, 100_075, 100_000, 100, 0.95), "late");
    assertFalse(TrafficRun.passes(6.9, 0.9, 100_075, 100_000, 100, 0.95), "a tenth not delivered");
    // a server that closed most writers: what the rest offered was delivered in time, at 16 % of the rate
    assertFalse(TrafficRun.passes(84, 0.95, 15_563, 100_000, 100, 0.95), "a sixth of the rate offered");
    assertTrue(TrafficRun.passes(2.9, 1.0, 0, 0, 100, 0.95), "a closed loop has no rate to offer");
  }
}
