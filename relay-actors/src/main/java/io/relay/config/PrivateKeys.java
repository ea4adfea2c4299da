package io.relay.config;

import java.io.ByteArrayOutputStream;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.NoSuchAlgorithmException;
import java.security.PrivateKey;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.pki.pem.DERPrivateKeyLoader;
import org.apache.pekko.pki.pem.PEMDecoder;

/**
 * Reads an unencrypted PEM private key in the forms OpenSSL, certbot and cert-manager write: PKCS#8
 * ({@code PRIVATE KEY}: RSA, EC, Ed25519), PKCS#1 ({@code RSA PRIVATE KEY}) and SEC1 ({@code EC
 * PRIVATE KEY}). What the client ports' TLS key is read with; the cluster links' key, which
 * Pekko's provider takes as RSA only, is read by Pekko's own loader ({@code ClusterCertificate}).
 */
public final class PrivateKeys {
  private static final List<String> PKCS8_KINDS = List.of("RSA", "EC", "Ed25519", "RSASSA-PSS");
  /** The DER of OID 1.2.840.10045.2.1, id-ecPublicKey: the algorithm of a PKCS#8 EC key. */
  private static final byte[] EC_PUBLIC_KEY = {0x06, 0x07, 0x2A, (byte) 0x86, 0x48, (byte) 0xCE, 0x3D, 0x02, 0x01};

  private PrivateKeys() {}

  /** The key of {@code pem}; throws with a one-line reason for any other text. */
  public static PrivateKey read(String pem) throws GeneralSecurityException {
    PEMDecoder.DERData der = PEMDecoder.decode(pem);
    return switch (der.label()) {
      case "PRIVATE KEY" -> pkcs8(der.bytes());
      case "EC PRIVATE KEY" -> pkcs8(sec1AsPkcs8(der.bytes()));
      default -> DERPrivateKeyLoader.load(der); // PKCS#1, or its refusal of any other label
    };
  }

  private static PrivateKey pkcs8(byte[] der) throws InvalidKeySpecException {
    for (String kind : PKCS8_KINDS) {
      try {
        return KeyFactory.getInstance(kind).generatePrivate(new PKCS8EncodedKeySpec(der));
      } catch (InvalidKeySpecException | NoSuchAlgorithmException notThisKind) {
        // the next kind
      }
    }
    throw new InvalidKeySpecException("a PKCS#8 key that is not RSA, EC or Ed25519");
  }

  /**
   * SEC1's {@code ECPrivateKey} (RFC 5915: version, the key, {@code [0]} its curve's OID, {@code [1]}
   * its public key) wrapped as the PKCS#8 the JDK reads: the curve goes into the algorithm.
   */
  private static byte[] sec1AsPkcs8(byte[] sec1) throws InvalidKeySpecException {
    int[] key = element(sec1, 0);
    byte[] curve = null;
    for (int at = key[0]; at < key[1]; at = element(sec1, at)[1]) {
      if ((sec1[at] & 0xFF) == 0xA0) {
        int[] parameters = element(sec1, at);
        curve = Arrays.copyOfRange(sec1, parameters[0], parameters[1]);
      }
    }
    if (curve == null) {
      throw new InvalidKeySpecException("an EC PRIVATE KEY that does not name its curve");
    }
    byte[] algorithm = der(0x30, EC_PUBLIC_KEY, curve);
    return der(0x30, new byte[] {0x02, 0x01, 0x00}, algorithm, der(0x04, sec1));
  }

  /** The bounds {start of its value, end} of the DER element at {@code at}. */
  private static int[] element(byte[] der, int at) throws InvalidKeySpecException {
    if (at + 2 > der.length) {
      throw new InvalidKeySpecException("a truncated EC PRIVATE KEY");
    }
    int length = der[at + 1] & 0xFF;
    int start = at + 2;
    if (length > 0x80 && length <= 0x83) {
      int bytes = length - 0x80;
      length = 0;
      for (int i = 0; i < bytes && start < der.length; i++) {
        length = length << 8 | der[start++] & 0xFF;
      }
    } else if (length >= 0x80) {
      throw new InvalidKeySpecException("an EC PRIVATE KEY with a length this reader does not take");
    }
    if (start + length > der.length) {
      throw new InvalidKeySpecException("a truncated EC PRIVATE KEY");
    }
    return new int[] {start, start + length};
  }

  /** The DER element of {@code tag} whose value is {@code parts} one after the other. */
  private static byte[] der(int tag, byte[]... parts) {
    ByteArrayOutputStream value = new ByteArrayOutputStream();
    Arrays.stream(parts).forEach(value::writeBytes);
    int length = value.size();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(tag);
    if (length < 0x80) {
      out.write(length);
    } else if (length < 0x100) {
      out.write(0x81);
      out.write(length);
    } else {
      out.write(0x82);
      out.write(length >> 8);
      out.write(length);
    }
    out.writeBytes(value.toByteArray());
    return out.toByteArray();
  }
}
