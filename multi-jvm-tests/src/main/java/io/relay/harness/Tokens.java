package io.relay.harness;

import com.auth0.jwt.JWT;
import com.auth0.jwt.algorithms.Algorithm;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** Tokens for harness clients, signed with the harness secret. */
public final class Tokens {
  private Tokens() {}

  public static String session(String topic, String bookingId, String... scopes) {
    Instant now = Instant.now();
    return JWT.create()
        .withAudience(HarnessConfig.AUDIENCE)
        .withIssuedAt(now)
        .withNotBefore(now)
        .withExpiresAt(now.plus(Duration.ofHours(2)))
        .withClaim("topic", topic)
        .withClaim("prefix", "session")
        .withClaim("booking_id", bookingId)
        .withClaim("scopes", List.of(scopes))
        .sign(Algorithm.HMAC256(HarnessConfig.SECRET));
  }

  public static String admin(String scope) {
    Instant now = Instant.now();
    return JWT.create()
        .withAudience(HarnessConfig.AUDIENCE)
        .withIssuedAt(now)
        .withExpiresAt(now.plus(Duration.ofHours(2)))
        .withClaim("scopes", List.of(scope))
        .sign(Algorithm.HMAC256(HarnessConfig.SECRET));
  }
}
