package io.relay.http;

import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTVerifier;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.exceptions.AlgorithmMismatchException;
import com.auth0.jwt.exceptions.IncorrectClaimException;
import com.auth0.jwt.exceptions.MissingClaimException;
import com.auth0.jwt.exceptions.SignatureVerificationException;
import com.auth0.jwt.exceptions.TokenExpiredException;
import com.auth0.jwt.interfaces.DecodedJWT;
import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Expiry;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Checks practable-style access tokens: HS256 only, sent raw or as {@code Bearer}, with {@code
 * aud}, {@code exp}, {@code nbf} and {@code iat} checked, {@code scopes} required, every claim of
 * its expected JSON type, and no critical header parameters (the relay understands none). Any
 * token it cannot accept is a 401, never an internal error.
 *
 * <p>A token verified once is remembered by its exact text ({@code relay.token-cache-size}, least
 * recently used first out): presented again before its {@code exp}, as every reconnecting client
 * presents it, its claims are taken from memory without decoding it or computing its HMAC again.
 * What was checked stays true: the signature and the claims are those of the same text, and
 * {@code nbf} and {@code iat} were already past. From its {@code exp} on, the token is verified in
 * full again (which refuses it once the leeway is over too).
 *
 * <p>Tokens are checked against the keys of {@link TokenKeys}: the current secret, then, during a
 * rotation, the previous one. When the keys change, every token remembered is verified again.
 */
final class TokenVerifier {
  private static final String BEARER = "Bearer ";
  /** Duplicate names in a token's header or claims are refused (RFC 7519 section 4 allows it). */
  private static final ObjectMapper STRICT_JSON =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();
  /** A JWS in compact serialization: header, payload and signature. */
  private static final int SEGMENTS = 3;
  private static final List<String> NUMERIC_DATES = List.of("exp", "nbf", "iat");
  private static final List<String> STRINGS = List.of("topic", "prefix", "booking_id");
  /** A remembered token not presented for this long is forgotten (verified in full if it comes back). */
  static final Duration CACHE_IDLE = Duration.ofMinutes(10);

  private final TokenKeys keys;
  private final HttpSettings settings;
  /** One verifier per key, the current key's first, for the keys of {@link Verifiers#version}. */
  private volatile Verifiers verifiers;
  /** Tokens verified before, by their text, each with the version of the keys it was verified under; null when the cache is off. */
  private final Cache<String, Remembered> verified;
  private final Runnable onCached;
  private final LongSupplier clockSeconds;

  /** The claims this relay uses. {@code topic}, {@code prefix} and {@code bookingId} may be empty. */
  record Claims(String topic, String prefix, List<String> scopes, String bookingId, long expiresAt) {
    boolean hasScope(String scope) {
      return scopes.contains(scope);
    }
  }

  private record Verifiers(long version, List<JWTVerifier> each) {}

  /**
   * A verifier that remembers up to {@code cacheSize} verified tokens (0: none), each until its
   * {@code exp} or until it has gone {@link #CACHE_IDLE} without being presented.
   *
   * @param onCached counts a token taken from the cache
   * @param clockSeconds the time {@code exp} is compared with, in seconds since the epoch
   */
  TokenVerifier(HttpSettings settings, TokenKeys keys, int cacheSize, Runnable onCached, LongSupplier clockSeconds) {
    this(settings, keys, cacheSize, onCached, clockSeconds, CACHE_IDLE);
  }

  TokenVerifier(HttpSettings settings, TokenKeys keys, int cacheSize, Runnable onCached, LongSupplier clockSeconds, Duration cacheIdle) {
    this.settings = settings;
    this.keys = keys;
    this.onCached = onCached;
    this.clockSeconds = clockSeconds;
    this.verified =
        cacheSize == 0
            ? null
            : Caffeine.newBuilder()
                .maximumSize(cacheSize)
                .expireAfter(untilExpOrIdle(clockSeconds, cacheIdle))
                .build();
    this.verifiers = verifiers(keys.keys());
  }

  private Verifiers verifiers(TokenKeys.Keys now) {
    List<JWTVerifier> each = new ArrayList<>(now.secrets().size());
    for (String secret : now.secrets()) {
      each.add(
          JWT.require(Algorithm.HMAC256(secret))
              .withAudience(settings.audience())
              .withClaimPresence("exp")
              .withClaimPresence("scopes")
              .acceptLeeway(settings.tokenLeeway().toSeconds())
              .build());
    }
    return new Verifiers(now.version(), List.copyOf(each));
  }

  /** The verifiers of the keys in use now; tokens remembered under other keys are forgotten. */
  private Verifiers current() {
    TokenKeys.Keys now = keys.keys();
    Verifiers in = verifiers;
    if (in.version() != now.version()) {
      in = verifiers(now);
      verifiers = in;
      if (verified != null) {
        verified.invalidateAll();
      }
    }
    return in;
  }

  /**
   * Verifies the {@code Authorization} header.
   *
   * @throws ApiException 401 for a missing, malformed, wrongly signed, expired, not yet valid or
   *     wrong-audience token, one without its required claims or with a claim of the wrong type, or
   *     one whose header lists critical parameters
   */
  Claims verify(Optional<String> authorization) {
    String token =
        authorization
            .map(String::trim)
            .map(h -> h.regionMatches(true, 0, BEARER, 0, BEARER.length()) ? h.substring(BEARER.length()).trim() : h)
            .filter(h -> !h.isEmpty())
            .orElseThrow(() -> new ApiException(401, "missing Authorization header with an access token"));
    Verifiers in = current();
    if (verified == null) {
      return verifyFully(token, in);
    }
    Remembered known = verified.getIfPresent(token);
    // a token verified under other keys is verified again: one remembered by a request that
    // began before the keys changed and ended after the cache was emptied is not taken
    if (known != null && known.keysVersion() == in.version() && clockSeconds.getAsLong() < known.claims().expiresAt()) {
      onCached.run();
      return known.claims();
    }
    Claims claims = verifyFully(token, in);
    verified.put(token, new Remembered(claims, in.version()));
    return claims;
  }

  /** A verified token's claims, and the version of the keys it was verified under. */
  private record Remembered(Claims claims, long keysVersion) {}

  /**
   * A remembered token leaves at its {@code exp} (from then on it is verified in full again) or
   * once it has gone {@code idle} without being presented, so what the cache holds follows the
   * tokens in use, not every token seen.
   */
  private static Expiry<String, Remembered> untilExpOrIdle(LongSupplier clockSeconds, Duration idle) {
    return Expiry.accessing((token, remembered) -> {
      Duration untilExp = Duration.ofSeconds(Math.max(0, remembered.claims().expiresAt() - clockSeconds.getAsLong()));
      return untilExp.compareTo(idle) < 0 ? untilExp : idle;
    });
  }

  /** How many verified tokens are remembered now, those past their {@code exp} or idle gone. */
  long cachedTokens() {
    if (verified == null) {
      return 0;
    }
    verified.cleanUp();
    return verified.estimatedSize();
  }

  /** Checks {@code token} against each key in turn: the first whose signature matches decides. */
  private static DecodedJWT verify(String token, Verifiers in) {
    for (int i = 0; i < in.each().size() - 1; i++) {
      try {
        return in.each().get(i).verify(token);
      } catch (SignatureVerificationException signedWithAnotherKey) {
        // the previous key's turn
      }
    }
    return in.each().get(in.each().size() - 1).verify(token);
  }

  private Claims verifyFully(String token, Verifiers in) {
    try {
      String[] segments = token.split("\\.", -1);
      if (segments.length != SEGMENTS) {
        throw new ApiException(401, "token is malformed");
      }
      if (json(segments[0]).has("crit")) {
        // RFC 7515 section 4.1.11: a token whose critical extensions are not understood is invalid
        throw new ApiException(401, "token header lists critical parameters (crit) this relay does not support");
      }
      JsonNode payload = json(segments[1]);
      checkTypes(payload);
      return claims(payload, verify(token, in));
    } catch (AlgorithmMismatchException e) {
      throw new ApiException(401, "token must be signed with HS256");
    } catch (SignatureVerificationException e) {
      throw new ApiException(401, "token signature is invalid");
    } catch (TokenExpiredException e) {
      throw new ApiException(401, "token has expired");
    } catch (MissingClaimException e) {
      throw new ApiException(401, "token is missing the " + e.getClaimName() + " claim");
    } catch (IncorrectClaimException e) {
      throw new ApiException(401, incorrect(e.getClaimName()));
    } catch (ApiException e) {
      throw e;
    } catch (RuntimeException e) {
      // JWTDecodeException, and what the JWT library throws for shapes it does not expect (a
      // payload of JSON null, for one): whatever the token is, it is the client's 401
      throw new ApiException(401, "token is malformed");
    }
  }

  /** Refuses a claim of the wrong JSON type, null included, before the JWT library reads them. */
  private static void checkTypes(JsonNode payload) {
    for (String name : NUMERIC_DATES) {
      if (payload.has(name) && !payload.get(name).isNumber()) {
        throw wrongType(name, "a number (seconds since the epoch)");
      }
    }
    for (String name : STRINGS) {
      if (payload.has(name) && !payload.get(name).isTextual()) {
        throw wrongType(name, "a string");
      }
    }
    JsonNode audience = payload.get("aud");
    if (audience != null && !audience.isTextual() && !isStrings(audience)) {
      throw wrongType("aud", "a string or a list of strings");
    }
    JsonNode scopes = payload.get("scopes");
    if (scopes != null && !isStrings(scopes)) {
      throw wrongType("scopes", "a list of strings");
    }
  }

  /** The relay's claims of a verified token whose claims have their types. */
  private static Claims claims(JsonNode payload, DecodedJWT jwt) {
    return new Claims(
        payload.path("topic").asText(), // "" when the claim is absent
        payload.path("prefix").asText(),
        payload.get("scopes").valueStream().map(JsonNode::asText).toList(),
        payload.path("booking_id").asText(),
        jwt.getExpiresAtAsInstant().getEpochSecond());
  }

  private static boolean isStrings(JsonNode node) {
    return node.isArray() && node.valueStream().allMatch(JsonNode::isTextual);
  }

  private static ApiException wrongType(String claim, String expected) {
    return new ApiException(401, "token claim " + claim + " must be " + expected);
  }

  /** A base64url segment of the token as a JSON object. */
  private static JsonNode json(String segment) {
    try {
      JsonNode node = STRICT_JSON.readTree(Base64.getUrlDecoder().decode(segment));
      if (node == null || !node.isObject()) {
        throw new ApiException(401, "token is malformed");
      }
      return node;
    } catch (IOException | IllegalArgumentException e) {
      throw new ApiException(401, "token is malformed");
    }
  }

  private static String incorrect(String claim) {
    return switch (claim) {
      case "aud" -> "token audience does not match this relay";
      case "nbf" -> "token is not valid yet";
      case "iat" -> "token is issued in the future";
      default -> "token claim " + claim + " is invalid";
    };
  }
}
