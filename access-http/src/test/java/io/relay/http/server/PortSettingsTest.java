package io.relay.http.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader.InvalidSettingException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How the node reads its client ports' limits: event loops, write buffer, connection limit. */
class PortSettingsTest {
  private static PortSettings read(String config) {
    return PortSettings.create(ConfigFactory.parseString(config).withFallback(ConfigFactory.load()));
  }

  @Test
  void theDefaultsAreAnEventLoopPerCoreA128KiBWriteBufferAndTheDocumentedTimeouts() {
    PortSettings settings = read("");
    assertEquals(Runtime.getRuntime().availableProcessors(), settings.eventLoops());
    assertEquals(128 * 1024, settings.writeBuffer());
    assertEquals(Duration.ofSeconds(10), settings.headerTimeout());
    assertEquals(Duration.ofSeconds(120), settings.idleTimeout());
    assertEquals(1024, settings.backlog());
  }

  @Test
  void theEventLoopsCanBeSetExplicitly() {
    assertEquals(3, read("relay.event-loops = 3").eventLoops());
  }

  @Test
  void noEventLoopIsRefusedNamingTheSetting() {
    InvalidSettingException refused = assertThrows(InvalidSettingException.class, () -> read("relay.event-loops = 0"));
    assertTrue(refused.getMessage().contains("RELAY_EVENT_LOOPS"), refused.getMessage());
  }

  @Test
  void aWriteBufferOutsideItsRangeIsRefusedNamingTheSetting() {
    InvalidSettingException refused = assertThrows(InvalidSettingException.class, () -> read("relay.write-buffer = 100"));
    assertTrue(refused.getMessage().contains("RELAY_WRITE_BUFFER"), refused.getMessage());
    assertTrue(refused.getMessage().contains("expected a size from 1024 to 67108864 bytes, got 100"), refused.getMessage());
  }

  @Test
  void automaticMaxConnectionsKeepsATenthOfTheDescriptorsAndAtLeast256() {
    assertEquals(18_000, PortSettings.fromDescriptorLimit(20_000));
    assertEquals(744, PortSettings.fromDescriptorLimit(1_000));
    assertEquals(10_000, PortSettings.fromDescriptorLimit(-1));
  }
}
