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
}
