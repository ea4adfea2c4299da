package io.relay.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader.InvalidSettingException;
import org.junit.jupiter.api.Test;

/** Settings read with their bounds: a value outside them is refused in one line naming the key and its variable. */
class SettingsReaderTest {
  private static SettingsReader reader(String config) {
    return new SettingsReader(ConfigFactory.parseString(config));
  }

  @Test
  void aSizeIsReadAsACountOrInHoconsFormWithinItsBounds() {
    assertEquals(16 * 1024 * 1024, reader("relay.buffer-bytes = 16MiB").bytes("relay.buffer-bytes", 1, Long.MAX_VALUE));
    assertEquals(1024, reader("relay.write-buffer = 1024").bytes("relay.write-buffer", 1024, 2048));
  }

  @Test
  void aSizeOutsideItsBoundsIsRefusedNamingTheSettingItsVariableAndTheBounds() {
    InvalidSettingException refused =
        assertThrows(InvalidSettingException.class, () -> reader("relay.max-message-bytes = 2GiB").bytes("relay.max-message-bytes", 1, Integer.MAX_VALUE - 1024));
    assertEquals(
        "relay.max-message-bytes (RELAY_MAX_MESSAGE_BYTES): expected a size from 1 to 2147482623 bytes, got 2147483648",
        refused.getMessage());
  }

  @Test
  void aSizeThatIsNotPositiveIsRefusedBeforeItsBounds() {
    InvalidSettingException refused = assertThrows(InvalidSettingException.class, () -> reader("relay.memory-budget = 0").bytes("relay.memory-budget", 0, 100));
    assertEquals("relay.memory-budget (RELAY_MEMORY_BUDGET): expected a positive size, got 0", refused.getMessage());
  }

  @Test
  void aSwitchOfThisRelaysOwnTakesHoconsSpellingsAndGos() {
    for (String yes : new String[] {"on", "yes", "true", "1", "t", "T", "TRUE", "True"}) {
      assertEquals(true, reader("relay.management-writes = \"" + yes + "\"").bool("relay.management-writes"), yes);
    }
    for (String no : new String[] {"off", "no", "false", "0", "f", "F", "FALSE", "False"}) {
      assertEquals(false, reader("relay.management-writes = \"" + no + "\"").bool("relay.management-writes"), no);
    }
    assertEquals(true, reader("relay.management-writes = true").bool("relay.management-writes"), "HOCON's boolean");
    for (String word : new String[] {"maybe", "2"}) {
      InvalidSettingException refused =
          assertThrows(InvalidSettingException.class, () -> reader("relay.management-writes = " + word).bool("relay.management-writes"));
      assertEquals("relay.management-writes (RELAY_MANAGEMENT_WRITES): expected on, off, true or false, got '" + word + "'", refused.getMessage());
    }
  }

  @Test
  void aSwitchThePractableRelaySharesTakesGosSpellingsOnlySinceItReadsAnyOtherAsFalse() {
    for (String yes : new String[] {"true", "1", "t", "T", "TRUE", "True"}) {
      assertEquals(true, reader("relay.allow-no-booking-id = \"" + yes + "\"").practableBool("relay.allow-no-booking-id"), yes);
    }
    for (String no : new String[] {"false", "0", "f", "F", "FALSE", "False"}) {
      assertEquals(false, reader("relay.allow-no-booking-id = \"" + no + "\"").practableBool("relay.allow-no-booking-id"), no);
    }
    for (String word : new String[] {"yes", "no", "on", "off", "maybe"}) {
      InvalidSettingException refused =
          assertThrows(InvalidSettingException.class, () -> reader("relay.allow-no-booking-id = " + word).practableBool("relay.allow-no-booking-id"));
      assertTrue(refused.getMessage().startsWith("relay.allow-no-booking-id (RELAY_ALLOW_NO_BOOKING_ID): expected true or false"), refused.getMessage());
    }
  }

  @Test
  void aValueThatMustBeGivenIsRefusedBlank() {
    assertEquals("http://relay.example.io", reader("relay.audience = \"http://relay.example.io\"").nonBlank("relay.audience"));
    InvalidSettingException refused = assertThrows(InvalidSettingException.class, () -> reader("relay.audience = \" \"").nonBlank("relay.audience"));
    assertEquals("relay.audience (RELAY_AUDIENCE): expected a value, got nothing", refused.getMessage());
  }
}
