package io.relay.node;

import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTCreator;
import com.auth0.jwt.algorithms.Algorithm;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.relay.http.HttpSettings;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Option;

/**
 * Mints an HS256 access token and prints it alone on a line, as practable's {@code relay token}
 * does. Options default to practable's {@code RELAY_TOKEN_*} variables, then to this relay's own
 * ({@link TokenEnvironment}).
 */
@Command(
    name = "token",
    mixinStandardHelpOptions = true,
    defaultValueProvider = TokenEnvironment.class,
    description = {
      "Print a signed access token.",
      "Reads practable's RELAY_TOKEN_TOPIC, _SECRET, _AUDIENCE, _LIFETIME, _BOOKING_ID, _CONNECTION_TYPE, "
          + "_SCOPE_ADMIN, _SCOPE_WRITE, _SCOPE_READ and _SCOPE_OTHER as its relay token does; options win over them."
    })
final class TokenCommand implements Callable<Integer> {
  /** A bare number of seconds, as practable's RELAY_TOKEN_LIFETIME. */
  private static final Pattern SECONDS = Pattern.compile("\\d+");

  @Option(names = "--topic", description = "Topic the token is for (default: RELAY_TOKEN_TOPIC; omit for admin and stats tokens).")
  String topic;

  @Option(
      names = "--scopes",
      split = ",",
      defaultValue = "read,write",
      description = {
        "Comma list of read, write, relay:admin, relay:stats (default: ${DEFAULT-VALUE}; with practable's variables "
            + "relay:admin if RELAY_TOKEN_SCOPE_ADMIN, write and read unless RELAY_TOKEN_SCOPE_WRITE or _READ is false, "
            + "and RELAY_TOKEN_SCOPE_OTHER)."
      })
  List<String> scopes;

  @Option(
      names = "--booking-id",
      description = "Booking id the token belongs to (default: RELAY_TOKEN_BOOKING_ID; with practable's variables relay-token-cli).")
  String bookingId;

  @Option(
      names = "--lifetime",
      defaultValue = "1h",
      description = "How long the token is valid: seconds (3600), or 90s, 30m, 1h (default: RELAY_TOKEN_LIFETIME, else 1h).")
  String lifetime;

  @Option(
      names = "--audience",
      defaultValue = "http://127.0.0.1:3000",
      description = "The aud claim: the access API's URL (default: RELAY_TOKEN_AUDIENCE, RELAY_AUDIENCE, else http://127.0.0.1:3000).")
  String audience;

  @Option(
      names = "--secret",
      description = "HS256 key (default: RELAY_TOKEN_SECRET, RELAY_SECRET, else the file RELAY_SECRET_FILE names; none = the development key).")
  String secret;

  @Option(
      names = "--secret-file",
      description = "A file holding the HS256 key: given here, it wins over RELAY_TOKEN_SECRET and RELAY_SECRET; --secret wins over it (default: RELAY_SECRET_FILE).")
  Path secretFile;

  @Option(
      names = "--prefix",
      defaultValue = "session",
      description = "The prefix claim (default: RELAY_TOKEN_CONNECTION_TYPE, else session).")
  String prefix;

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    Duration validFor;
    try {
      validFor =
          SECONDS.matcher(lifetime).matches()
              ? Duration.ofSeconds(Long.parseLong(lifetime))
              : ConfigFactory.empty().withValue("d", ConfigValueFactory.fromAnyRef(lifetime)).getDuration("d");
    } catch (ConfigException | NumberFormatException e) {
      err.println("relay token: --lifetime (RELAY_TOKEN_LIFETIME) must be seconds, such as 3600, or a duration such as 90s, 30m or 1h");
      return RelayCli.BAD_CONFIGURATION;
    }
    String key = secret == null ? "" : secret;
    ParseResult given = spec.commandLine().getParseResult();
    if (given.hasMatchedOption("--secret-file") && !given.hasMatchedOption("--secret")) {
      key = ""; // a file named on the command line wins over the secret variables
    }
    if (key.isEmpty() && secretFile != null) {
      try {
        key = Files.readString(secretFile, StandardCharsets.UTF_8).strip();
      } catch (IOException e) {
        err.println("relay token: cannot read the secret from " + secretFile + ": " + e.getMessage());
        return RelayCli.BAD_CONFIGURATION;
      }
    }
    if (key.isEmpty()) {
      err.println(
          "relay token: none of RELAY_TOKEN_SECRET, RELAY_SECRET and RELAY_SECRET_FILE is set; signing with the development key");
      key = HttpSettings.DEV_SECRET;
    }
    // a second in the past, as practable's: usable at once wherever the clock is a little behind
    Instant issued = Instant.ofEpochSecond(Instant.now().getEpochSecond() - 1);
    JWTCreator.Builder token =
        JWT.create()
            .withAudience(audience)
            .withIssuedAt(issued)
            .withNotBefore(issued)
            .withExpiresAt(issued.plus(validFor))
            .withClaim("prefix", prefix)
            .withClaim("scopes", scopes);
    if (topic != null) {
      token.withClaim("topic", topic);
    }
    if (bookingId != null) {
      token.withClaim("booking_id", bookingId);
    }
    spec.commandLine().getOut().println(token.sign(Algorithm.HMAC256(key)));
    return 0;
  }
}
