package io.relay.node;

import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTCreator;
import com.auth0.jwt.algorithms.Algorithm;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.relay.http.HttpSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Mints an HS256 access token, as practable's {@code relay token} does. */
@Command(name = "token", mixinStandardHelpOptions = true, description = "Print a signed access token.")
final class TokenCommand implements Callable<Integer> {
  @Option(names = "--topic", description = "Topic the token is for (omit for admin and stats tokens).")
  String topic;

  @Option(
      names = "--scopes",
      split = ",",
      defaultValue = "read,write",
      description = "Comma list of read, write, relay:admin, relay:stats (default: ${DEFAULT-VALUE}).")
  List<String> scopes;

  @Option(names = "--booking-id", description = "Booking id the token belongs to.")
  String bookingId;

  @Option(names = "--lifetime", defaultValue = "1h", description = "How long the token is valid, as 90s, 30m, 1h (default: ${DEFAULT-VALUE}).")
  String lifetime;

  @Option(
      names = "--audience",
      defaultValue = "${env:RELAY_AUDIENCE:-http://127.0.0.1:3000}",
      description = "The aud claim: the access API's URL (default: RELAY_AUDIENCE or ${DEFAULT-VALUE}).")
  String audience;

  @Option(
      names = "--secret",
      defaultValue = "${env:RELAY_SECRET}",
      description = "HS256 key (default: RELAY_SECRET, else the file RELAY_SECRET_FILE names; neither = the development key).")
  String secret;

  @Option(
      names = "--secret-file",
      defaultValue = "${env:RELAY_SECRET_FILE}",
      description = "A file holding the HS256 key, when --secret is not given (default: RELAY_SECRET_FILE).")
  Path secretFile;

  @Option(names = "--prefix", defaultValue = "session", description = "The prefix claim (default: ${DEFAULT-VALUE}).")
  String prefix;

  @Override
  public Integer call() {
    Duration validFor;
    try {
      validFor = ConfigFactory.empty().withValue("d", ConfigValueFactory.fromAnyRef(lifetime)).getDuration("d");
    } catch (ConfigException e) {
      System.err.println("relay token: --lifetime must be a duration such as 90s, 30m or 1h");
      return RelayCli.BAD_CONFIGURATION;
    }
    String key = secret == null ? "" : secret;
    if (key.isEmpty() && secretFile != null) {
      try {
        key = Files.readString(secretFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        System.err.println("relay token: cannot read the secret from " + secretFile + ": " + e.getMessage());
        return RelayCli.BAD_CONFIGURATION;
      }
    }
    if (key.isEmpty()) {
      System.err.println("relay token: neither RELAY_SECRET nor RELAY_SECRET_FILE is set; signing with the development key");
      key = HttpSettings.DEV_SECRET;
    }
    Instant now = Instant.now();
    JWTCreator.Builder token =
        JWT.create()
            .withAudience(audience)
            .withIssuedAt(now)
            .withNotBefore(now)
            .withExpiresAt(now.plus(validFor))
            .withClaim("prefix", prefix)
            .withClaim("scopes", scopes);
    if (topic != null) {
      token.withClaim("topic", topic);
    }
    if (bookingId != null) {
      token.withClaim("booking_id", bookingId);
    }
    System.out.println(token.sign(Algorithm.HMAC256(key)));
    return 0;
  }
}
