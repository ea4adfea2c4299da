package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader.InvalidSettingException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How the node reads its sockets' limits: the selector threads per port, the connection limit. */
class SocketSettingsTest {
  private static SocketSettings read(String config) {
    return SocketSettings.create(ConfigFactory.parseString(config).withFallback(ConfigFactory.load()));
  }

  @Test
  void aPortHasASelectorThreadPerCoreByDefault() {
    assertEquals(Runtime.getRuntime().availableProcessors(), read("").selectors());
  }

  @Test
  void theSelectorThreadsCanBeSetExplicitly() {
    assertEquals(3, read("relay.socket-selectors = 3").selectors());
  }

  @Test
  void noSelectorThreadIsRefusedNamingTheSetting() {
    InvalidSettingException refused = assertThrows(InvalidSettingException.class, () -> read("relay.socket-selectors = 0"));
    assertTrue(refused.getMessage().contains("RELAY_SOCKET_SELECTORS"), refused.getMessage());
  }

  @Test
  void aBusySelectorPollsFor50MicrosecondsByDefaultAndOffTurnsItOff() {
    assertEquals(Duration.ofNanos(50_000), read("").selectorSpin());
    assertEquals(Duration.ZERO, read("relay.socket-selector-spin = off").selectorSpin());
    assertEquals(Duration.ofNanos(200_000), read("relay.socket-selector-spin = 200us").selectorSpin());
  }

  @Test
  void aSpinOfMoreThanAMillisecondIsRefusedNamingTheSetting() {
    InvalidSettingException refused =
        assertThrows(InvalidSettingException.class, () -> read("relay.socket-selector-spin = 5ms"));
    assertTrue(refused.getMessage().contains("RELAY_SOCKET_SELECTOR_SPIN"), refused.getMessage());
  }

  @Test
  void automaticMaxConnectionsKeepsATenthOfTheDescriptorsAndAtLeast256() {
    assertEquals(18_000, SocketSettings.fromDescriptorLimit(20_000));
    assertEquals(744, SocketSettings.fromDescriptorLimit(1_000));
    assertEquals(10_000, SocketSettings.fromDescriptorLimit(-1));
  }
}
