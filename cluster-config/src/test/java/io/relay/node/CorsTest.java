package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Tokens;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * CORS on the access API: preflights from allowed origins get 204 with what the API takes, every
 * answer to an allowed origin (errors included) names it, other origins get no CORS headers; the
 * default allows any origin, and an empty list turns CORS off.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CorsTest {
  private static final String PAGE = "http://page.test:8080";
  private static final String LAB = "https://lab.example.org";
  private static final String STRANGER = "https://elsewhere.example";
  @AutoClose private final TestNode listed = TestNode.start(Map.of("relay.cors-origins", PAGE + ", " + LAB.toUpperCase()));
  @AutoClose private final TestNode byDefault = TestNode.start();

  private static AccessClient.Answer preflight(TestNode node, String origin) {
    return new AccessClient(node)
        .request(
            "OPTIONS",
            "/session/lab/a",
            Map.of(
                "Origin", origin,
                "Access-Control-Request-Method", "POST",
                "Access-Control-Request-Headers", "authorization,content-type"));
  }

  private static AccessClient.Answer post(TestNode node, String path, String origin, String token) {
    return new AccessClient(node).request("POST", path, Map.of("Origin", origin, "Authorization", token));
  }

  private static Optional<String> header(AccessClient.Answer answer, String name) {
    return answer.headers().firstValue(name);
  }

  private static void assertAllowed(AccessClient.Answer answer, String origin, String why) {
    assertEquals(Optional.of(origin), header(answer, "Access-Control-Allow-Origin"), why + ": the origin is named");
    assertTrue(header(answer, "Vary").orElse("").contains("Origin"), why + ": Vary: Origin");
  }

  private static void assertNotAllowed(AccessClient.Answer answer, String why) {
    assertEquals(Optional.empty(), header(answer, "Access-Control-Allow-Origin"), why + ": no Access-Control-Allow-Origin");
    assertTrue(header(answer, "Vary").orElse("").contains("Origin"), why + ": Vary: Origin");
  }

  @Test
  void aPreflightFromAnAllowedOriginGets204WithWhatTheApiTakes() {
    for (String origin : List.of(PAGE, LAB)) {
      AccessClient.Answer answer = preflight(listed, origin);
      assertEquals(204, answer.status(), origin);
      assertAllowed(answer, origin, "preflight from " + origin);
      String methods = header(answer, "Access-Control-Allow-Methods").orElse("");
      assertTrue(methods.contains("POST") && methods.contains("GET"), methods);
      String headers = header(answer, "Access-Control-Allow-Headers").orElse("").toLowerCase();
      assertTrue(headers.contains("authorization") && headers.contains("content-type"), headers);
      assertEquals(Optional.of("600"), header(answer, "Access-Control-Max-Age"));
    }
  }

  @Test
  void answersToAnAllowedOriginNameItErrorsIncluded() {
    String token = Tokens.session("lab/a", "read", "write");
    AccessClient.Answer granted = post(listed, "/session/lab/a", PAGE, token);
    assertEquals(200, granted.status());
    assertAllowed(granted, PAGE, "a granted code");
    assertEquals(
        Optional.of("X-Relay-Missing-Nodes"),
        header(granted, "Access-Control-Expose-Headers"),
        "the cluster's missing nodes may be read");

    AccessClient.Answer refused = post(listed, "/session/lab/a", PAGE, "not.a.token");
    assertEquals(401, refused.status());
    assertEquals(401, refused.body().get("code").asInt());
    assertAllowed(refused, PAGE, "a refused token");

    AccessClient.Answer unknown = post(listed, "/nothing", PAGE, token);
    assertEquals(404, unknown.status());
    assertAllowed(unknown, PAGE, "an unknown path");

    AccessClient.Answer unknownMethod = new AccessClient(listed).request("BREW", "/status", Map.of("Origin", PAGE));
    assertEquals(501, unknownMethod.status());
    assertAllowed(unknownMethod, PAGE, "a method the access port itself refuses");
  }

  @Test
  void anotherOriginGetsNoCorsHeaders() {
    AccessClient.Answer preflight = preflight(listed, STRANGER);
    assertEquals(403, preflight.status());
    assertEquals(403, preflight.body().get("code").asInt());
    assertNotAllowed(preflight, "a stranger's preflight");
    assertFalse(header(preflight, "Access-Control-Allow-Methods").isPresent());
    assertNotAllowed(post(listed, "/session/lab/a", STRANGER, "not.a.token"), "a stranger's request");
  }

  @Test
  void byDefaultAnyOriginMayCallTheApi() {
    AccessClient.Answer answer = preflight(byDefault, STRANGER);
    assertEquals(204, answer.status());
    assertAllowed(answer, STRANGER, "the default (*)");
    assertAllowed(post(byDefault, "/session/lab/a", STRANGER, Tokens.session("lab/a", "read")), STRANGER, "the default (*)");
  }

  @Test
  void anEmptyListTurnsCorsOff() {
    try (TestNode none = TestNode.start(Map.of("relay.cors-origins", ""))) {
      AccessClient.Answer answer = preflight(none, PAGE);
      assertEquals(405, answer.status(), "OPTIONS is not a method of the API");
      assertEquals(Optional.empty(), header(answer, "Access-Control-Allow-Origin"));
      assertEquals(Optional.empty(), header(post(none, "/session/lab/a", PAGE, "not.a.token"), "Access-Control-Allow-Origin"));
    }
  }

  @Test
  void aBadOriginStopsTheNodeNamingTheKey() {
    Exception e =
        org.junit.jupiter.api.Assertions.assertThrows(
            io.relay.config.SettingsReader.InvalidSettingException.class,
            () -> RelayNode.load(com.typesafe.config.ConfigFactory.parseMap(Map.of("relay.cors-origins", "https://lab.example.org/page"))));
    assertTrue(e.getMessage().contains("relay.cors-origins (RELAY_CORS_ORIGINS)"), e.getMessage());
  }
}
