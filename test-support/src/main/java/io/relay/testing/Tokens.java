package io.relay.testing;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mints tokens with Nimbus JOSE+JWT, an HS256 library independent of the relay's own, so tests
 * prove that any standard token works. Nodes under test are given {@link #SECRET} and {@link
 * #AUDIENCE} unless a test says otherwise.
 */
public final class Tokens {
  public static final String SECRET = "test-secret-0123456789abcdef-0123456789abcdef";
  public static final String AUDIENCE = "http://relay.test";

  private Tokens() {}

  /** Claims of a valid session token for the test audience, valid for an hour from now. */
  public static JWTClaimsSet.Builder session(String topic, List<String> scopes, String bookingId) {
    Instant now = Instant.now();
    JWTClaimsSet.Builder claims =
        new JWTClaimsSet.Builder()
            .audience(AUDIENCE)
            .issueTime(Date.from(now))
            .notBeforeTime(Date.from(now))
            .expirationTime(Date.from(now.plus(Duration.ofHours(1))))
            .claim("prefix", "session")
            .claim("scopes", scopes);
    if (topic != null) {
      claims.claim("topic", topic);
    }
    if (bookingId != null) {
      claims.claim("booking_id", bookingId);
    }
    return claims;
  }

  /** A session token of booking {@code booking-1}. */
  public static String session(String topic, String... scopes) {
    return sign(session(topic, List.of(scopes), "booking-1").build());
  }

  /** A session token of booking {@code bookingId}. */
  public static String booked(String topic, String bookingId, String... scopes) {
    return sign(session(topic, List.of(scopes), bookingId).build());
  }

  /** An operator's token: no topic, no booking, these scopes. */
  public static String admin(String... scopes) {
    return sign(session(null, List.of(scopes), null).build());
  }

  public static String sign(JWTClaimsSet claims) {
    return sign(claims, SECRET);
  }

  public static String sign(JWTClaimsSet claims, String secret) {
    try {
      SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), claims);
      jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
      return jwt.serialize();
    } catch (JOSEException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * A token of exactly this header and these claims (JSON text, whatever their shape), signed
   * HS256 with {@link #SECRET}.
   */
  public static String signRaw(String header, String claims) {
    try {
      Base64.Encoder base64 = Base64.getUrlEncoder().withoutPadding();
      String signed =
          base64.encodeToString(header.getBytes(StandardCharsets.UTF_8))
              + "."
              + base64.encodeToString(claims.getBytes(StandardCharsets.UTF_8));
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      return signed + "." + base64.encodeToString(mac.doFinal(signed.getBytes(StandardCharsets.US_ASCII)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** An unsigned token ({@code alg: none}). */
  public static String unsigned(JWTClaimsSet claims) {
    return new PlainJWT(claims).serialize();
  }
}
