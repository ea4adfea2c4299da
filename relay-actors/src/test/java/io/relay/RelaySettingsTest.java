package io.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import org.junit.jupiter.api.Test;

/** The relay's settings that are more than a key's value read as its type. */
class RelaySettingsTest {
  private static final long HEAP = 1L << 30;

  private static long budget(String value) {
    return RelaySettings.memoryBudget(new SettingsReader(ConfigFactory.parseMap(java.util.Map.of("relay.memory-budget", value))), HEAP);
  }

  @Test
  void theMemoryBudgetIsASizeOrAPercentageOfTheHeapAbove0AndAtMost90() {
    assertEquals(HEAP / 2, budget("50%"));
    assertEquals(HEAP * 9 / 10, budget("90 %"));
    assertEquals(256L << 20, budget("256MiB"));
    for (String refused : new String[] {"0%", "-5%", "91%", "NaN%", "Infinity%", "lots%"}) {
      SettingsReader.InvalidSettingException e = assertThrows(SettingsReader.InvalidSettingException.class, () -> budget(refused), refused);
      assertTrue(e.getMessage().startsWith("relay.memory-budget (RELAY_MEMORY_BUDGET): "), refused + ": " + e.getMessage());
    }
  }

  private static RelaySettings create(java.util.Map<String, Object> settings) {
    return RelaySettings.create(ConfigFactory.parseMap(settings).withFallback(ConfigFactory.load()));
  }

  private static String refusal(java.util.Map<String, Object> settings) {
    return assertThrows(SettingsReader.InvalidSettingException.class, () -> create(settings)).getMessage();
  }

  @Test
  void anIdleTimeoutNoLongerThanThePingIntervalIsRefusedSinceItWouldCutOffEveryClientThatOnlyReads() {
    for (String idle : new String[] {"15s", "20s"}) {
      String refused = refusal(java.util.Map.of("relay.ping-interval", "20s", "relay.idle-timeout", idle));
      assertTrue(refused.startsWith("relay.idle-timeout (RELAY_IDLE_TIMEOUT): expected more than RELAY_PING_INTERVAL"), refused);
    }
    assertEquals(java.time.Duration.ofSeconds(21), create(java.util.Map.of("relay.ping-interval", "20s", "relay.idle-timeout", "21s")).idleTimeout());
  }

  @Test
  void theTokenLeewayIsWholeSecondsAndMayBeNoneAsInThePractableRelay() {
    assertEquals(java.time.Duration.ZERO, create(java.util.Map.of("relay.token-leeway", "0s")).tokenLeeway());
    assertEquals(java.time.Duration.ofSeconds(5), create(java.util.Map.of()).tokenLeeway());
    for (String refused : new String[] {"500ms", "1.5s", "-1s"}) {
      String message = refusal(java.util.Map.of("relay.token-leeway", refused));
      assertTrue(message.startsWith("relay.token-leeway (RELAY_TOKEN_LEEWAY): expected whole seconds, 0s or more"), message);
    }
  }

  @Test
  void aDurationUnderAMillisecondIsRefusedWhereTheRelayCountsInMilliseconds() {
    String refused = refusal(java.util.Map.of("relay.claims.hold-down", "500us"));
    assertEquals("relay.claims.hold-down (RELAY_CLAIMS_HOLD_DOWN): expected a duration of at least 1ms, got PT0.0005S", refused);
  }
}
