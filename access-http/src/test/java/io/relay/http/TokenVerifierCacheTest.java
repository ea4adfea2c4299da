package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The cache of verified tokens: a token presented again is accepted from memory until its {@code
 * exp}, when it is forgotten, and from then on verified in full (and refused once the leeway is over); what is not
 * exactly a verified token's text is never taken from it. And the leeway on {@code nbf} and {@code iat}.
 */
class TokenVerifierCacheTest {
  private static final HttpSettings SETTINGS =
      HttpSettings.create(
          ConfigFactory.parseMap(Map.of("relay.secret", Tokens.SECRET, "relay.audience", Tokens.AUDIENCE, "relay.token-leeway", "5s"))
              .withFallback(ConfigFactory.load()));

  private final AtomicLong now = new AtomicLong(Instant.now().getEpochSecond());
  private final AtomicInteger cached = new AtomicInteger();

  private static String token(long expiresAt) {
    return Tokens.sign(
        Tokens.session("lab", List.of("read"), "b1")
            .issueTime(new Date((expiresAt - 3600) * 1000))
            .notBeforeTime(null)
            .expirationTime(new Date(expiresAt * 1000))
            .build());
  }

  private TokenVerifier verifier(int size) {
    return new TokenVerifier(SETTINGS, TokenKeys.from(SETTINGS), size, cached::incrementAndGet, now::get);
  }

  @Test
  void aTokenPresentedAgainIsTakenFromTheCacheWithTheSameClaims() {
    TokenVerifier verifier = verifier(100);
    String token = token(now.get() + 60);
    TokenVerifier.Claims first = verifier.verify(Optional.of(token));
    assertEquals(0, cached.get(), "the first presentation is verified in full");
    assertEquals(first, verifier.verify(Optional.of("Bearer " + token)), "raw or Bearer: the same token");
    assertEquals(first, verifier.verify(Optional.of(token)));
    assertEquals(2, cached.get());
    assertEquals("lab", first.topic());
  }

  @Test
  void fromItsExpiryATokenIsVerifiedInFullAndWithinTheLeewayStillPasses() {
    // the JWT library's clock is the real one, so the token's exp is set relative to it
    long realNow = Instant.now().getEpochSecond();
    TokenVerifier verifier = verifier(100);
    String token = token(realNow + 2);
    verifier.verify(Optional.of(token));
    now.set(realNow + 2);
    verifier.verify(Optional.of(token));
    assertEquals(0, cached.get(), "at its exp the token is checked again (within the leeway it still passes)");
  }

  @Test
  void aCachedTokenIsRefusedOncePastItsExpAndTheLeeway() {
    HttpSettings noLeeway =
        HttpSettings.create(
            ConfigFactory.parseMap(Map.of("relay.secret", Tokens.SECRET, "relay.audience", Tokens.AUDIENCE, "relay.token-leeway", "0s"))
                .withFallback(ConfigFactory.load()));
    TokenVerifier verifier = new TokenVerifier(noLeeway, TokenKeys.from(noLeeway), 100, cached::incrementAndGet, () -> Instant.now().getEpochSecond());
    long expiresAt = Instant.now().getEpochSecond() + 1; // the JWT library's clock is the real one
    String token = token(expiresAt);
    verifier.verify(Optional.of(token));
    verifier.verify(Optional.of(token));
    assertEquals(1, cached.get(), "taken from the cache before its exp");
    Await.until("the real clock passes the token's exp", Duration.ofSeconds(5), () -> Instant.now().getEpochSecond() > expiresAt);
    ApiException expired = assertThrows(ApiException.class, () -> verifier.verify(Optional.of(token)), "the same token, past its exp");
    assertEquals("401 token has expired", expired.status() + " " + expired.getMessage());
    assertEquals(1, cached.get(), "not taken from the cache");
  }

  @Test
  void aTokenWithinTheLeewayOfItsNbfOrIatIsTakenAndOneBeyondItIsRefusedSayingWhy() {
    long realNow = Instant.now().getEpochSecond(); // the JWT library's clock
    TokenVerifier verifier = verifier(100);
    verifier.verify(Optional.of(dated(realNow + 3, realNow + 3)));
    ApiException early = assertThrows(ApiException.class, () -> verifier.verify(Optional.of(dated(realNow + 30, null))));
    assertEquals("401 token is not valid yet", early.status() + " " + early.getMessage());
    ApiException ahead = assertThrows(ApiException.class, () -> verifier.verify(Optional.of(dated(null, realNow + 30))));
    assertEquals("401 token is issued in the future", ahead.status() + " " + ahead.getMessage());
    ApiException expired = assertThrows(ApiException.class, () -> verifier.verify(Optional.of(token(realNow - 10))));
    assertEquals("401 token has expired", expired.status() + " " + expired.getMessage());
  }

  /** A token valid for an hour whose {@code nbf} and {@code iat} are these epoch seconds, or absent. */
  private static String dated(Long notBefore, Long issuedAt) {
    return Tokens.sign(
        Tokens.session("lab", List.of("read"), "b1")
            .notBeforeTime(notBefore == null ? null : new Date(notBefore * 1000))
            .issueTime(issuedAt == null ? null : new Date(issuedAt * 1000))
            .build());
  }

  @Test
  void aTokenIsForgottenAtItsExpOrOnceItIsNoLongerPresented() {
    long realNow = Instant.now().getEpochSecond();
    TokenVerifier verifier =
        new TokenVerifier(SETTINGS, TokenKeys.from(SETTINGS), 100, cached::incrementAndGet, () -> Instant.now().getEpochSecond(), Duration.ofHours(1));
    verifier.verify(Optional.of(token(realNow + 2)));
    verifier.verify(Optional.of(token(realNow + 3600)));
    assertEquals(2, verifier.cachedTokens(), "both remembered");
    Await.until("the token past its exp leaves the cache, the other stays", Duration.ofSeconds(10), () -> verifier.cachedTokens() == 1);

    TokenVerifier forgetful =
        new TokenVerifier(SETTINGS, TokenKeys.from(SETTINGS), 100, cached::incrementAndGet, () -> Instant.now().getEpochSecond(), Duration.ofSeconds(1));
    forgetful.verify(Optional.of(token(realNow + 3600)));
    assertEquals(1, forgetful.cachedTokens());
    Await.until("a token not presented for the idle time leaves the cache", Duration.ofSeconds(10), () -> forgetful.cachedTokens() == 0);
  }

  @Test
  void aTokenThatDiffersFromAVerifiedOneInAnyByteIsVerifiedAndRefused() {
    TokenVerifier verifier = verifier(100);
    String token = token(now.get() + 60);
    verifier.verify(Optional.of(token));
    String tampered = token.substring(0, token.length() - 2) + (token.endsWith("A") ? "BB" : "AA");
    ApiException e = assertThrows(ApiException.class, () -> verifier.verify(Optional.of(tampered)));
    assertEquals(401, e.status());
    assertEquals(0, cached.get());
  }

  @Test
  void withTheCacheOffEveryPresentationIsVerifiedInFull() {
    TokenVerifier verifier = verifier(0);
    String token = token(now.get() + 60);
    verifier.verify(Optional.of(token));
    verifier.verify(Optional.of(token));
    assertEquals(0, cached.get());
  }
}
