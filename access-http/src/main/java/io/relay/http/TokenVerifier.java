package io.relay.http;

import com.auth0.jwt.JWT;
import com.auth0.jwt.JWTVerifier;
import com.auth0.jwt.algorithms.Algorithm;
import com.auth0.jwt.exceptions.AlgorithmMismatchException;
import com.auth0.jwt.exceptions.IncorrectClaimException;
import com.auth0.jwt.exceptions.JWTVerificationException;
import com.auth0.jwt.exceptions.MissingClaimException;
import com.auth0.jwt.exceptions.SignatureVerificationException;
import com.auth0.jwt.exceptions.TokenExpiredException;
import com.auth0.jwt.interfaces.Claim;
import com.auth0.jwt.interfaces.DecodedJWT;
import java.util.List;
import java.util.Optional;

/**
 * Checks practable-style access tokens: HS256 only, sent raw or as {@code Bearer}, with {@code
 * aud}, {@code exp}, {@code nbf} and {@code iat} checked and {@code scopes} required.
 */
final class TokenVerifier {
  private static final String BEARER = "Bearer ";

  private final JWTVerifier verifier;

  /** The claims this relay uses. {@code topic}, {@code prefix} and {@code bookingId} may be empty. */
  record Claims(String topic, String prefix, List<String> scopes, String bookingId, long expiresAt) {
    boolean hasScope(String scope) {
      return scopes.contains(scope);
    }
  }

  TokenVerifier(HttpSettings settings) {
    this.verifier =
        JWT.require(Algorithm.HMAC256(settings.secret()))
            .withAudience(settings.audience())
            .withClaimPresence("exp")
            .withClaimPresence("scopes")
            .acceptLeeway(settings.tokenLeeway().toSeconds())
            .build();
  }

  /**
   * Verifies the {@code Authorization} header.
   *
   * @throws ApiException 401 for a missing, malformed, wrongly signed, expired, not yet valid or
   *     wrong-audience token, or one without its required claims
   */
  Claims verify(Optional<String> authorization) {
    String token =
        authorization
            .map(String::trim)
            .map(h -> h.regionMatches(true, 0, BEARER, 0, BEARER.length()) ? h.substring(BEARER.length()).trim() : h)
            .filter(h -> !h.isEmpty())
            .orElseThrow(() -> new ApiException(401, "missing Authorization header with an access token"));
    DecodedJWT jwt;
    try {
      jwt = verifier.verify(token);
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
    } catch (JWTVerificationException e) {
      throw new ApiException(401, "token is malformed");
    }
    List<String> scopes = strings(jwt.getClaim("scopes"));
    if (scopes == null) {
      throw new ApiException(401, "token scopes claim must be a list of strings");
    }
    return new Claims(
        string(jwt.getClaim("topic")),
        string(jwt.getClaim("prefix")),
        scopes,
        string(jwt.getClaim("booking_id")),
        jwt.getExpiresAtAsInstant().getEpochSecond());
  }

  private static String incorrect(String claim) {
    return switch (claim) {
      case "aud" -> "token audience does not match this relay";
      case "nbf" -> "token is not valid yet";
      case "iat" -> "token is issued in the future";
      default -> "token claim " + claim + " is invalid";
    };
  }

  private static String string(Claim claim) {
    String value = claim.isMissing() || claim.isNull() ? null : claim.asString();
    return value == null ? "" : value;
  }

  private static List<String> strings(Claim claim) {
    if (claim.isMissing() || claim.isNull()) {
      return null;
    }
    try {
      return claim.asList(String.class);
    } catch (JWTVerificationException e) {
      return null;
    }
  }
}
