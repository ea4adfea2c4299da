package io.relay.bench;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a benchmark connection goes. For the relay: through the real access API, one fresh
 * one-time code per connection (tokens are minted here, one per topic and role). For nginx+nchan:
 * a WebSocket publisher on /pub/{topic}, subscribers on /sub/{topic}, and for chat a pub/sub
 * location per participant that publishes to its own channel and reads its peer's.
 */
interface Endpoints {
  enum Role { WRITER, READER, PARTICIPANT }

  CompletableFuture<URI> uri(String topic, Role role, int index);

  /** The relay's access API. */
  final class Relay implements Endpoints {
    private static final Pattern URI_FIELD = Pattern.compile("\"uri\"\\s*:\\s*\"([^\"]+)\"");
    private final URI access;
    private final Algorithm key;
    private final String audience;
    private final HttpClient http;
    private final Map<String, String> tokens = new ConcurrentHashMap<>();

    /** @param tls for an https access API (whose codes are for wss); null for http */
    Relay(URI access, String secret, String audience, Tls tls) {
      this.access = access;
      this.key = Algorithm.HMAC256(secret);
      this.audience = audience;
      HttpClient.Builder http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5));
      if (tls != null) {
        http.sslContext(tls.context()).sslParameters(tls.parameters());
      }
      this.http = http.build();
    }

    @Override
    public CompletableFuture<URI> uri(String topic, Role role, int index) {
      return uri(topic, tokens.computeIfAbsent(topic + " " + role, k -> token(topic, role)));
    }

    /** A one-time relay URI for {@code topic}, asked for with {@code token}. */
    CompletableFuture<URI> uri(String topic, String token) {
      HttpRequest request =
          HttpRequest.newBuilder(access.resolve("/session/" + topic))
              .timeout(Duration.ofSeconds(30))
              .header("Authorization", token)
              .POST(HttpRequest.BodyPublishers.noBody())
              .build();
      return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
          .thenApply(
              response -> {
                Matcher m = URI_FIELD.matcher(response.body());
                if (response.statusCode() != 200 || !m.find()) {
                  // the body is a JSON error; it never carries a code
                  throw new IllegalStateException("access API answered " + response.statusCode() + ": " + response.body());
                }
                return URI.create(m.group(1));
              });
    }

    /** A session token for {@code topic} with the role's scopes, issued now. */
    String token(String topic, Role role) {
      return token(topic, role, Instant.now().getEpochSecond());
    }

    /**
     * A session token for {@code topic} with the role's scopes, issued at {@code issuedAt} (seconds
     * since the epoch) and valid for two hours from then: the same text for the same arguments.
     */
    String token(String topic, Role role, long issuedAt) {
      return token(topic, role, "bench", issuedAt);
    }

    /** As {@link #token(String, Role, long)}, for booking {@code bookingId}. */
    String token(String topic, Role role, String bookingId, long issuedAt) {
      List<String> scopes =
          switch (role) {
            case WRITER -> List.of("write");
            case READER -> List.of("read");
            case PARTICIPANT -> List.of("read", "write");
          };
      Instant now = Instant.ofEpochSecond(issuedAt);
      return JWT.create()
          .withAudience(audience)
          .withIssuedAt(now)
          .withNotBefore(now)
          .withExpiresAt(now.plus(Duration.ofHours(2)))
          .withClaim("prefix", "session")
          .withClaim("topic", topic)
          .withClaim("scopes", scopes)
          .withClaim("booking_id", bookingId)
          .sign(key);
    }

    /**
     * Denies ({@code deny} true) or allows booking {@code bookingId} until {@code until} through
     * the access API with an admin token: the status it answered.
     */
    CompletableFuture<Integer> denyOrAllow(boolean deny, String bookingId, Instant until) {
      Instant now = Instant.now();
      String admin =
          JWT.create()
              .withAudience(audience)
              .withIssuedAt(now)
              .withNotBefore(now)
              .withExpiresAt(now.plus(Duration.ofMinutes(5)))
              .withClaim("prefix", "session")
              .withClaim("scopes", List.of("relay:admin"))
              .sign(key);
      URI uri = access.resolve("/bids/" + (deny ? "deny" : "allow") + "?bid=" + bookingId + "&exp=" + until.getEpochSecond());
      HttpRequest request =
          HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).header("Authorization", admin).POST(HttpRequest.BodyPublishers.noBody()).build();
      return http.sendAsync(request, HttpResponse.BodyHandlers.discarding()).thenApply(HttpResponse::statusCode);
    }
  }

  /** nginx with the nchan module, configured by relay-bench/nchan.conf.in; an https base means wss. */
  final class Nchan implements Endpoints {
    private final URI base;

    Nchan(URI base) {
      this.base = base;
    }

    @Override
    public CompletableFuture<URI> uri(String topic, Role role, int index) {
      String path =
          switch (role) {
            case WRITER -> "/pub/" + topic;
            case READER -> "/sub/" + topic;
            case PARTICIPANT -> "/chat/" + topic + "/" + index + "/" + (1 - index);
          };
      String scheme = "https".equals(base.getScheme()) ? "wss" : "ws";
      return CompletableFuture.completedFuture(URI.create(scheme + "://" + base.getHost() + ":" + base.getPort() + path));
    }
  }
}
