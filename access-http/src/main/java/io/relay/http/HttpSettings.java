package io.relay.http;

import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The access API's and relay server's settings of {@code relay { }}, read once at startup.
 *
 * @param secret HS256 key of access tokens, or empty (see {@link TokenKeys}, which reads the keys)
 * @param secretFile a file holding that key instead, or empty
 * @param secretPrevious a previous key also accepted during a rotation, or empty
 * @param secretPreviousFile a file holding the previous key instead, or empty
 * @param secretReloadInterval how often the secret files are read again, at most
 * @param devMode true when no secret was configured and the documented development key is in use
 * @param audience the {@code aud} tokens must carry
 * @param url public relay base URL written into returned URIs
 * @param host bind address
 * @param portAccess access API port
 * @param portRelay WebSocket relay port
 * @param allowNoBookingId whether tokens without {@code booking_id} are accepted
 * @param askTimeout how long a route waits for the node's actors
 * @param tokenLeeway clock skew tolerated when checking {@code exp}, {@code nbf} and {@code iat}
 * @param tokenCacheSize verified tokens remembered at most, so that a token presented again is not
 *     verified again until it expires; 0 for none
 * @param tlsCert PEM certificate chain, or empty for plain HTTP
 * @param tlsKey PEM private key, or empty for plain HTTP
 * @param logLimitInterval of each kind of warning that clients can cause, one line is logged per
 *     this interval and the rest are counted
 * @param corsOrigins the origins whose pages may call the access API ({@code *}: any); empty for
 *     no cross-origin access
 * @param corsMaxAge how long browsers may cache the answer to a preflight
 * @param maxAdmissionsInFlight codes being issued and connections being admitted at once, at most;
 *     more are refused with 503 and Retry-After
 */
public record HttpSettings(
    String secret,
    String secretFile,
    String secretPrevious,
    String secretPreviousFile,
    Duration secretReloadInterval,
    boolean devMode,
    String audience,
    String url,
    String host,
    int portAccess,
    int portRelay,
    boolean allowNoBookingId,
    Duration askTimeout,
    Duration tokenLeeway,
    int tokenCacheSize,
    String tlsCert,
    String tlsKey,
    Duration logLimitInterval,
    List<String> corsOrigins,
    Duration corsMaxAge,
    int maxAdmissionsInFlight) {

  /**
   * The well-known key used when neither RELAY_SECRET nor RELAY_SECRET_FILE is set. Anyone can mint tokens with it, so a node
   * using it binds to loopback only and warns loudly.
   */
  public static final String DEV_SECRET = "relay-development-secret-do-not-use-in-production";
  /** In {@code relay.cors-origins}: pages of any origin may call the access API. */
  public static final String ANY_ORIGIN = "*";
  /** An origin as browsers serialize it: scheme, host and an optional port. */
  private static final Pattern ORIGIN = Pattern.compile("[a-z][a-z0-9+.-]*://[^/?#@\\s]+");

  /** The settings without the keys, so that no log line or message that shows them shows a key. */
  @Override
  public String toString() {
    return "HttpSettings[audience=" + audience + ", url=" + url + ", host=" + host + ", portAccess=" + portAccess + ", portRelay=" + portRelay
        + ", devMode=" + devMode + ", secretFile=" + secretFile + ", secretPreviousFile=" + secretPreviousFile + "]";
  }

  public static HttpSettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    String secret = r.string("relay.secret");
    String secretFile = r.string("relay.secret-file");
    String url = r.string("relay.url").replaceAll("/+$", "");
    if (!url.matches("wss?://[^\\s?#]+")) {
      throw SettingsReader.invalid("relay.url", "expected ws://host[:port][/prefix] or wss://..., got '" + url + "'");
    }
    String tlsCert = r.string("relay.tls-cert");
    String tlsKey = r.string("relay.tls-key");
    if (tlsCert.isEmpty() != tlsKey.isEmpty()) {
      throw SettingsReader.invalid("relay.tls-cert", "set both RELAY_TLS_CERT and RELAY_TLS_KEY, or neither");
    }
    return new HttpSettings(
        secret,
        secretFile,
        r.string("relay.secret-previous"),
        r.string("relay.secret-previous-file"),
        r.duration("relay.secret-reload-interval"),
        secret.isEmpty() && secretFile.isEmpty(),
        r.nonBlank("relay.audience"),
        url,
        r.string("relay.host"),
        r.port("relay.port-access"),
        r.port("relay.port-relay"),
        r.practableBool("relay.allow-no-booking-id"),
        r.duration("relay.ask-timeout"),
        r.wholeSeconds("relay.token-leeway"),
        r.integer("relay.token-cache-size", 0, 10_000_000),
        tlsCert,
        tlsKey,
        r.duration("relay.log-limit-interval"),
        corsOrigins(r.string("relay.cors-origins")),
        r.duration("relay.cors-max-age"),
        r.integer("relay.max-admissions-in-flight", 1, 1_000_000));
  }

  /**
   * The comma list of origins, each {@code *} or {@code scheme://host[:port]} as a browser sends
   * it in {@code Origin} (no path, no trailing slash).
   */
  private static List<String> corsOrigins(String list) {
    List<String> origins = new ArrayList<>();
    for (String entry : list.split(",")) {
      String origin = entry.trim().toLowerCase(Locale.ROOT);
      if (origin.isEmpty()) {
        continue;
      }
      if (!origin.equals(ANY_ORIGIN) && !ORIGIN.matcher(origin).matches()) {
        throw SettingsReader.invalid(
            "relay.cors-origins", "expected * or origins such as https://lab.example.org:8443 (no path), got '" + entry.trim() + "'");
      }
      origins.add(origin);
    }
    return List.copyOf(origins);
  }

  public boolean tls() {
    return !tlsCert.isEmpty();
  }
}
