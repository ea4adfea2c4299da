package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.interfaces.DecodedJWT;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code relay token} reads practable's RELAY_TOKEN_* variables as practable's {@code relay token}
 * does, prints the token alone on a line, and lets its own options win over the variables.
 */
class TokenEnvironmentTest {
  /** The example in practable's {@code relay token --help} (its cmd/relay/cmd/token.go). */
  static final Map<String, String> PRACTABLE_HELP =
      Map.of(
          "RELAY_TOKEN_AUDIENCE", "https://relay-access.example.io",
          "RELAY_TOKEN_BOOKING_ID", "some_booking_id",
          "RELAY_TOKEN_LIFETIME", "3600",
          "RELAY_TOKEN_SECRET", "somesecret",
          "RELAY_TOKEN_TOPIC", "123");

  /** What {@code relay token} printed, its status and its standard error. */
  record Run(int status, String out, String err) {
    String token() {
      assertEquals(0, status, "relay token's status; it said: " + err);
      assertTrue(out.endsWith("\n") && out.strip().split("\n").length == 1, "one line holding the token, got: " + out);
      return out.strip();
    }
  }

  static Run token(Map<String, String> environment, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int status =
        new CommandLine(new TokenCommand())
            .setDefaultValueProvider(new TokenEnvironment(environment))
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute(args);
    return new Run(status, out.toString(), err.toString());
  }

  private static DecodedJWT verified(String token, String secret) {
    return JWT.require(Algorithm.HMAC256(secret)).build().verify(token);
  }

  @Test
  void practablesHelpExampleGivesPractablesClaims() {
    long before = Instant.now().getEpochSecond();
    String minted = token(PRACTABLE_HELP).token();
    long after = Instant.now().getEpochSecond();
    DecodedJWT token = verified(minted, "somesecret");
    assertEquals(List.of("https://relay-access.example.io"), token.getAudience());
    assertEquals("123", token.getClaim("topic").asString());
    assertEquals("some_booking_id", token.getClaim("booking_id").asString());
    assertEquals("session", token.getClaim("prefix").asString());
    assertEquals(List.of("write", "read"), token.getClaim("scopes").asList(String.class), "practable's order");
    long issued = token.getIssuedAtAsInstant().getEpochSecond();
    assertEquals(issued, token.getNotBeforeAsInstant().getEpochSecond(), "nbf = iat");
    assertEquals(issued + 3600, token.getExpiresAtAsInstant().getEpochSecond(), "exp = iat + RELAY_TOKEN_LIFETIME seconds");
    assertTrue(issued >= before - 1 && issued <= after, "iat is when the token was made (or a second before), was " + (issued - before) + " s after the command started, which took " + (after - before) + " s");
  }

  @Test
  void practablesDefaultsApplyOnceAnyOfItsVariablesIsSet() {
    DecodedJWT token = verified(token(Map.of("RELAY_TOKEN_SECRET", "s", "RELAY_TOKEN_TOPIC", "t")).token(), "s");
    assertEquals("relay-token-cli", token.getClaim("booking_id").asString());
    assertEquals(List.of("write", "read"), token.getClaim("scopes").asList(String.class));
    assertEquals("session", token.getClaim("prefix").asString());
  }

  @Test
  void scopesAreCombinedInPractablesOrder() {
    Map<String, String> admin =
        Map.of(
            "RELAY_TOKEN_SECRET", "s",
            "RELAY_TOKEN_SCOPE_ADMIN", "true",
            "RELAY_TOKEN_SCOPE_READ", "false",
            "RELAY_TOKEN_SCOPE_WRITE", "0");
    assertEquals(List.of("relay:admin"), verified(token(admin).token(), "s").getClaim("scopes").asList(String.class));
    Map<String, String> stats = Map.of("RELAY_TOKEN_SECRET", "s", "RELAY_TOKEN_SCOPE_OTHER", "relay:stats");
    assertEquals(
        List.of("write", "read", "relay:stats"), verified(token(stats).token(), "s").getClaim("scopes").asList(String.class));
    Map<String, String> all =
        Map.of("RELAY_TOKEN_SECRET", "s", "RELAY_TOKEN_SCOPE_ADMIN", "T", "RELAY_TOKEN_SCOPE_OTHER", "expt");
    assertEquals(
        List.of("relay:admin", "write", "read", "expt"), verified(token(all).token(), "s").getClaim("scopes").asList(String.class));
  }

  @Test
  void noScopeOrABadBooleanIsRefusedByName() {
    Run none =
        token(Map.of("RELAY_TOKEN_SECRET", "s", "RELAY_TOKEN_SCOPE_READ", "false", "RELAY_TOKEN_SCOPE_WRITE", "false"));
    assertEquals(RelayCli.BAD_CONFIGURATION, none.status());
    assertTrue(none.err().contains("No scopes requested"), none.err());
    assertEquals("", none.out());
    Run bad = token(Map.of("RELAY_TOKEN_SECRET", "s", "RELAY_TOKEN_SCOPE_READ", "yes"));
    assertEquals(RelayCli.BAD_CONFIGURATION, bad.status());
    assertTrue(bad.err().contains("RELAY_TOKEN_SCOPE_READ must be true or false"), bad.err());
  }

  @Test
  void optionsWinOverTheVariables() {
    DecodedJWT token =
        verified(
            token(PRACTABLE_HELP, "--topic", "other", "--scopes", "read", "--booking-id", "b2", "--lifetime", "90s", "--secret", "flag-secret")
                .token(),
            "flag-secret");
    assertEquals("other", token.getClaim("topic").asString());
    assertEquals(List.of("read"), token.getClaim("scopes").asList(String.class));
    assertEquals("b2", token.getClaim("booking_id").asString());
    assertEquals(90, token.getExpiresAtAsInstant().getEpochSecond() - token.getIssuedAtAsInstant().getEpochSecond());
    assertEquals(List.of("https://relay-access.example.io"), token.getAudience(), "the variable where no option is given");
  }

  @Test
  void aSecretFileOnTheCommandLineWinsOverTheSecretVariables(@TempDir Path dir) throws Exception {
    Path file = Files.writeString(dir.resolve("secret"), "file-secret\n");
    Map<String, String> variables = Map.of("RELAY_TOKEN_SECRET", "practable-secret", "RELAY_SECRET", "node-secret", "RELAY_TOKEN_TOPIC", "t");
    verified(token(variables, "--secret-file", file.toString()).token(), "file-secret");
    verified(token(variables, "--secret-file", file.toString(), "--secret", "flag-secret").token(), "flag-secret");
    verified(token(Map.of("RELAY_SECRET", "node-secret", "RELAY_SECRET_FILE", file.toString())).token(), "node-secret");
  }

  @Test
  void practablesVariablesWinOverThisRelaysOwn() {
    Map<String, String> both =
        Map.of(
            "RELAY_TOKEN_SECRET", "practable-secret",
            "RELAY_SECRET", "node-secret",
            "RELAY_TOKEN_AUDIENCE", "https://practable.example",
            "RELAY_AUDIENCE", "https://node.example",
            "RELAY_TOKEN_TOPIC", "t");
    DecodedJWT token = verified(token(both).token(), "practable-secret");
    assertEquals(List.of("https://practable.example"), token.getAudience());
    DecodedJWT own = verified(token(Map.of("RELAY_SECRET", "node-secret", "RELAY_AUDIENCE", "https://node.example")).token(), "node-secret");
    assertEquals(List.of("https://node.example"), own.getAudience());
    assertNull(own.getClaim("booking_id").asString(), "without practable's variables no booking id is made up");
    assertEquals(List.of("read", "write"), own.getClaim("scopes").asList(String.class));
  }

  @Test
  void aSecretIsTakenAsItIs() {
    String secret = "a$$b${env:HOME}c$";
    verified(token(Map.of("RELAY_SECRET", secret)).token(), secret);
    verified(token(Map.of("RELAY_TOKEN_SECRET", secret)).token(), secret);
  }

  @Test
  void emptyVariablesCountAsUnset() {
    TokenEnvironment empty = new TokenEnvironment(Map.of("RELAY_TOKEN_TOPIC", "", "RELAY_TOKEN_SECRET", ""));
    assertFalse(empty.practable());
    DecodedJWT token = verified(token(Map.of("RELAY_TOKEN_TOPIC", "", "RELAY_SECRET", "s")).token(), "s");
    assertTrue(token.getClaim("topic").isMissing());
  }

  @Test
  void aBareLifetimeIsSeconds() {
    DecodedJWT token = verified(token(Map.of("RELAY_SECRET", "s"), "--lifetime", "120").token(), "s");
    assertEquals(120, token.getExpiresAtAsInstant().getEpochSecond() - token.getIssuedAtAsInstant().getEpochSecond());
    Run bad = token(Map.of("RELAY_SECRET", "s", "RELAY_TOKEN_LIFETIME", "an hour"));
    assertEquals(RelayCli.BAD_CONFIGURATION, bad.status());
    assertTrue(bad.err().contains("RELAY_TOKEN_LIFETIME"), bad.err());
  }
}
