package io.relay.config;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.Certificate;

/**
 * Whether a private key read from a setting's file is the one of the certificate it is given
 * with: what the client ports' TLS files and the cluster's are checked for before they are used.
 */
public final class KeyPairs {
  private KeyPairs() {}

  /**
   * Whether {@code key} signs what {@code cert}'s public key verifies (RSA, EC and Ed25519 keys); a
   * kind of key this check does not know is taken as matching: the handshakes will tell.
   */
  public static boolean matches(PrivateKey key, Certificate cert) {
    String algorithm =
        switch (key.getAlgorithm()) {
          case "RSA" -> "SHA256withRSA";
          case "EC" -> "SHA256withECDSA";
          case "Ed25519", "EdDSA" -> "Ed25519";
          default -> null;
        };
    if (algorithm == null) {
      return true;
    }
    try {
      byte[] probe = "relay key check".getBytes(StandardCharsets.US_ASCII);
      Signature signer = Signature.getInstance(algorithm);
      signer.initSign(key);
      signer.update(probe);
      Signature verifier = Signature.getInstance(algorithm);
      verifier.initVerify(cert.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signer.sign());
    } catch (GeneralSecurityException e) {
      return false;
    }
  }
}
