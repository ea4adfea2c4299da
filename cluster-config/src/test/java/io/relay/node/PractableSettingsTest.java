package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The practable relay's serve settings this relay ignores are found in the environment by name. */
class PractableSettingsTest {
  private static List<String> found(Map<String, String> environment) {
    return PractableSettings.found(environment).stream().map(PractableSettings.Ignored::name).toList();
  }

  @Test
  void practablesRunScriptHasFourThisRelayIgnores() {
    // practable's run.sh
    Map<String, String> run =
        Map.ofEntries(
            Map.entry("RELAY_ALLOW_NO_BOOKING_ID", "true"),
            Map.entry("RELAY_AUDIENCE", "http://localhost"),
            Map.entry("RELAY_LOG_LEVEL", "debug"),
            Map.entry("RELAY_LOG_FORMAT", "text"),
            Map.entry("RELAY_LOG_FILE", "stdout"),
            Map.entry("RELAY_PORT_ACCESS", "3001"),
            Map.entry("RELAY_PORT_PROFILE", "6061"),
            Map.entry("RELAY_PORT_RELAY", "3003"),
            Map.entry("RELAY_SECRET", "secret"),
            Map.entry("RELAY_TIDY_EVERY", "5m"),
            Map.entry("RELAY_URL", "ws://localhost:3003"));
    assertEquals(List.of("RELAY_LOG_LEVEL", "RELAY_LOG_FILE", "RELAY_PORT_PROFILE", "RELAY_TIDY_EVERY"), found(run));
  }

  @Test
  void practablesOlderNamesAreFoundToo() {
    // practable's docker-up.sh
    Map<String, String> docker =
        Map.of(
            "RELAY_ACCESSPORT", "10002",
            "RELAY_ACCESSFQDN", "https://relay-access.practable.io",
            "RELAY_ALLOWNOBOOKINGID", "true",
            "RELAY_RELAYPORT", "10003",
            "RELAY_RELAYFQDN", "wss://relay.practable.io",
            "RELAY_DEVELOPMENT", "true",
            "RELAY_PRUNEEVERY", "5m");
    assertEquals(
        List.of(
            "RELAY_ACCESSPORT",
            "RELAY_RELAYPORT",
            "RELAY_ACCESSFQDN",
            "RELAY_RELAYFQDN",
            "RELAY_ALLOWNOBOOKINGID",
            "RELAY_PRUNEEVERY",
            "RELAY_DEVELOPMENT"),
        found(docker));
  }

  @Test
  void emptyOrThisRelaysOwnSettingsAreNotFound() {
    assertEquals(List.of(), found(Map.of("RELAY_PROFILE", "", "RELAY_BUFFER_SIZE", "128", "RELAY_STATS_EVERY", "5s", "RELAY_TOKEN_LEEWAY", "5s")));
  }
}
