package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.relay.testing.Tokens;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Tokens of every wrong shape get the access API's 401 JSON error, never a 500: critical header
 * parameters, wrongly typed or null claims, headers and claims that are not JSON objects, and a
 * generated set of corrupted tokens.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TokenShapeTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String HEADER = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
  /** Characters outside base64url and the token's dots: any of them breaks a token. */
  private static final String FOREIGN = "!#$%&'()*+,/:;<=>?@[]^`{|}~\"\\";
  @AutoClose private final TestNode node = TestNode.start();
  private final AccessClient access = new AccessClient(node);

  /** The claims of a valid session token for lab/a, as JSON. */
  private static ObjectNode claims() {
    long now = Instant.now().getEpochSecond();
    ObjectNode claims = JSON.createObjectNode();
    claims.put("aud", TestNode.AUDIENCE);
    claims.put("iat", now);
    claims.put("nbf", now);
    claims.put("exp", now + 3600);
    claims.put("topic", "lab/a");
    claims.put("prefix", "session");
    claims.putArray("scopes").add("read").add("write");
    claims.put("booking_id", "booking-1");
    return claims;
  }

  private static String with(String claim, String value) {
    ObjectNode claims = claims();
    try {
      claims.set(claim, JSON.readTree(value));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException(value, e);
    }
    return Tokens.signRaw(HEADER, claims.toString());
  }

  /** Asserts the access API's 401: status, JSON code and a message; returns the message. */
  private String assertRefused(String path, String token, String why) {
    AccessClient.Answer answer = path.equals("/status") ? access.get(path, token) : access.post(path, token);
    JsonNode body = answer.body();
    // the body's message only: an accepted token's body would carry a code
    assertEquals(401, answer.status(), why + ": " + (body == null ? "no body" : body.path("message").asText()));
    assertTrue(body != null && body.path("code").asInt() == 401, why + ": JSON carries the code: " + body);
    assertTrue(!body.path("message").asText().isBlank(), why + ": JSON carries a message");
    return body.path("message").asText();
  }

  private String assertRefused(String token, String why) {
    return assertRefused("/session/lab/a", token, why);
  }

  @Test
  void aHandSignedValidTokenIsAccepted() {
    AccessClient.Answer answer = access.post("/session/lab/a", Tokens.signRaw(HEADER, claims().toString()));
    assertEquals(200, answer.status(), "the shape every other case breaks is itself valid: " + answer.body().path("message"));
  }

  @Test
  void aCriticalHeaderParameterIsRefused() {
    for (String header :
        List.of(
            "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"crit\":[\"exp\"]}",
            "{\"alg\":\"HS256\",\"crit\":[\"x-relay-ext\"],\"x-relay-ext\":true}",
            "{\"alg\":\"HS256\",\"crit\":[]}")) {
      String message = assertRefused(Tokens.signRaw(header, claims().toString()), "header " + header);
      assertTrue(message.contains("crit"), "the message names crit: " + message);
    }
  }

  @Test
  void wronglyTypedClaimsAreRefused() {
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("scopes", "[\"read\", 1]");
    cases.put("topic", "5");
    cases.put("exp", "\"x\"");
    cases.put("booking_id", "{}");
    cases.put("aud", "[\"" + TestNode.AUDIENCE + "\", 5]");
    cases.put("nbf", "true");
    cases.put("prefix", "[\"session\"]");
    cases.forEach(
        (claim, value) -> {
          String message = assertRefused(with(claim, value), claim + ": " + value);
          assertTrue(message.contains(claim), "the message names " + claim + ": " + message);
        });
  }

  @Test
  void nullClaimsAreRefused() {
    for (String claim : List.of("exp", "nbf", "iat", "aud", "scopes", "topic", "prefix", "booking_id")) {
      assertRefused(with(claim, "null"), claim + ": null");
      assertRefused("/status", with(claim, "null"), "status, " + claim + ": null");
    }
  }

  @Test
  void headersAndClaimsThatAreNotJsonObjectsAreRefused() {
    String claims = claims().toString();
    for (String notAnObject : List.of("null", "[]", "5", "\"text\"", "true", "", "{", "{}}", "{} {}")) {
      assertRefused(Tokens.signRaw(HEADER, notAnObject), "claims " + notAnObject);
      assertRefused(Tokens.signRaw(notAnObject, claims), "header " + notAnObject);
    }
    String duplicate = claims.replaceFirst("\\{", "{\"exp\":1,");
    assertRefused(Tokens.signRaw(HEADER, duplicate), "a claim named twice");
    assertRefused(Tokens.signRaw("{\"alg\":\"HS256\",\"alg\":\"none\"}", claims), "alg named twice");
  }

  @Test
  void generatedMalformedTokensAllGet401JsonAndNever500() {
    List<String> tokens = new ArrayList<>();
    Map<String, List<String>> wrong =
        Map.of(
            "exp", List.of("null", "\"x\"", "\"1\"", "true", "{}", "[]", "[1]"),
            "nbf", List.of("null", "\"x\"", "false", "{}", "[1]"),
            "iat", List.of("null", "\"1\"", "true", "{}", "[]"),
            "aud", List.of("null", "5", "true", "{}", "[5]", "[\"" + TestNode.AUDIENCE + "\", {}]"),
            "scopes", List.of("null", "\"read\"", "5", "{}", "[1]", "[\"read\", null]", "[[\"read\"]]"),
            "topic", List.of("null", "5", "true", "{}", "[]", "[\"lab/a\"]"),
            "prefix", List.of("null", "1", "{}"),
            "booking_id", List.of("null", "7", "false", "{}", "[\"b\"]"));
    wrong.forEach((claim, values) -> values.forEach(value -> tokens.add(with(claim, value))));
    String valid = Tokens.signRaw(HEADER, claims().toString());
    Random random = new Random(13);
    for (int i = 0; i < 120; i++) {
      StringBuilder token = new StringBuilder(valid);
      switch (i % 4) {
        case 0 -> token.setLength(1 + random.nextInt(valid.length() - 1));
        case 1 -> token.setCharAt(random.nextInt(valid.length()), FOREIGN.charAt(random.nextInt(FOREIGN.length())));
        case 2 -> token.insert(random.nextInt(valid.length()), '.');
        default -> {
          int dot = random.nextBoolean() ? valid.indexOf('.') : valid.lastIndexOf('.');
          token.deleteCharAt(dot);
        }
      }
      tokens.add(token.toString());
    }
    for (int i = 0; i < tokens.size(); i++) {
      assertRefused(i % 2 == 0 ? "/session/lab/a" : "/status", tokens.get(i), "generated token " + i);
    }
    System.out.printf("%d malformed tokens, each refused with 401%n", tokens.size());
  }
}
