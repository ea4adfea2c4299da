package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A deployment moved from practable: a node started with practable's settings names those it
 * ignores in one warning, and tokens minted the way practable's docs and scripts mint them get
 * codes, status and deny answers from it.
 */
class PractableMigrationTest {
  private static final String SECRET = "somesecret";
  private static final String AUDIENCE = "https://relay-access.example.io";
  /** From practable's run.sh: the values must never reach the log. */
  private static final Map<String, String> PRACTABLE_SERVE =
      Map.of(
          "RELAY_LOG_LEVEL", "debug",
          "RELAY_LOG_FILE", "/var/log/relay/relay.log",
          "RELAY_PORT_PROFILE", "6061",
          "RELAY_TIDY_EVERY", "5m",
          "RELAY_SECRET", SECRET,
          "RELAY_AUDIENCE", AUDIENCE);

  private static LogCapture log;
  private static TestNode node;
  private static AccessClient access;

  @BeforeAll
  static void start() {
    log = new LogCapture();
    node = TestNode.start(Map.of("relay.secret", SECRET, "relay.audience", AUDIENCE), PRACTABLE_SERVE);
    access = new AccessClient(node);
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
    log.close();
  }

  @Test
  void theIgnoredSettingsAreNamedInOneWarningWithoutTheirValues() {
    List<String> warnings = log.messagesContaining("practable relay settings are set that this relay ignores");
    assertEquals(1, warnings.size(), "one warning at start, got: " + warnings);
    String warning = warnings.get(0);
    for (String name : List.of("RELAY_LOG_LEVEL", "RELAY_LOG_FILE", "RELAY_PORT_PROFILE", "RELAY_TIDY_EVERY")) {
      assertTrue(warning.contains(name), name + " is named: " + warning);
    }
    assertTrue(warning.contains("RELAY_DENY_SWEEP_INTERVAL"), "says what to use instead: " + warning);
    assertFalse(warning.contains("RELAY_SECRET") || warning.contains("RELAY_AUDIENCE"), "settings read as this relay's own are not named: " + warning);
    for (String value : List.of("debug", "/var/log", "6061", "5m", SECRET)) {
      assertFalse(log.text().contains(value), "the log never holds a setting's value: " + value);
    }
  }

  @Test
  void practablesTokenHelpExampleGetsACodeThatConnects() throws Exception {
    String bearer = TokenEnvironmentTest.token(TokenEnvironmentTest.PRACTABLE_HELP).token();
    AccessClient.Answer answer = access.post("/session/123", bearer);
    assertEquals(200, answer.status(), "code request with practable's example token: " + answer.body());
    String uri = answer.body().get("uri").asText();
    assertTrue(uri.startsWith("ws://127.0.0.1:" + node.relayPort + "/session/123?code="), "the relay URI's shape");
    WebSocket socket =
        HttpClient.newHttpClient()
            .newWebSocketBuilder()
            .buildAsync(URI.create(uri), new WebSocket.Listener() {})
            .get(10, TimeUnit.SECONDS);
    socket.abort();
  }

  @Test
  void practablesGetStatsScriptReadsStatus() {
    // practable's scripts/prod/get_stats.sh (which practable's relay token would refuse without a topic)
    Map<String, String> getStats =
        Map.of(
            "RELAY_TOKEN_LIFETIME", "3600",
            "RELAY_TOKEN_SCOPE_OTHER", "relay:stats",
            "RELAY_TOKEN_SECRET", SECRET,
            "RELAY_TOKEN_AUDIENCE", AUDIENCE);
    String token = TokenEnvironmentTest.token(getStats).token();
    AccessClient.Answer status = access.get("/status", token);
    assertEquals(200, status.status(), "GET /status: " + status.body());
    assertTrue(status.body().isArray(), "an array of connection reports: " + status.body());
  }

  @Test
  void anAdminTokenDeniesTheBookingOfPractablesExample() {
    Map<String, String> admin = new HashMap<>(TokenEnvironmentTest.PRACTABLE_HELP);
    admin.put("RELAY_TOKEN_SCOPE_ADMIN", "true");
    admin.put("RELAY_TOKEN_BOOKING_ID", "denied_booking");
    String adminToken = TokenEnvironmentTest.token(admin).token();
    long exp = Instant.now().getEpochSecond() + 600;
    assertEquals(204, access.post("/bids/deny?bid=denied_booking&exp=" + exp, adminToken).status(), "deny with an admin token");
    Map<String, String> user = new HashMap<>(TokenEnvironmentTest.PRACTABLE_HELP);
    user.put("RELAY_TOKEN_BOOKING_ID", "denied_booking");
    AccessClient.Answer refused = access.post("/session/123", TokenEnvironmentTest.token(user).token());
    assertEquals(400, refused.status(), "a denied booking's code request, as practable answers it: " + refused.body());
  }
}
