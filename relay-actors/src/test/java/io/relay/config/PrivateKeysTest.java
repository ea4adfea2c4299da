package io.relay.config;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.ClusterPki;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The private keys a TLS setting takes, as OpenSSL writes each form: each read as its certificate's key. */
class PrivateKeysTest {
  @TempDir Path dir;

  /** Makes a key with {@code openssl} and {@code args}, and a certificate of it; asserts the key read is the certificate's. */
  private void readsAsItsCertificatesKey(String form, String... args) throws Exception {
    Path key = dir.resolve(form + ".key");
    List<String> command = new ArrayList<>(List.of(args[0], "-out", key.toString())); // before the operands (genrsa's bits)
    command.addAll(List.of(args).subList(1, args.length));
    ClusterPki.openssl(dir, command.toArray(String[]::new));
    Path cert = dir.resolve(form + ".crt");
    ClusterPki.openssl(dir, "req", "-x509", "-key", key.toString(), "-subj", "/CN=" + form, "-days", "1", "-out", cert.toString());
    Certificate certificate = CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(Files.readAllBytes(cert)));
    String pem = Files.readString(key);
    assertTrue(KeyPairs.matches(PrivateKeys.read(pem), certificate), form + " (" + pem.lines().findFirst().orElse("") + ") is read as its certificate's key");
  }

  @Test
  void anRsaKeyInPkcs8OrPkcs1() throws Exception {
    readsAsItsCertificatesKey("rsa-pkcs8", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048");
    readsAsItsCertificatesKey("rsa-pkcs1", "genrsa", "-traditional", "2048");
  }

  @Test
  void anEcKeyInPkcs8OrSec1OnEachCurve() throws Exception {
    for (String curve : new String[] {"prime256v1", "secp384r1", "secp521r1"}) {
      readsAsItsCertificatesKey("ec-pkcs8-" + curve, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:" + curve);
      readsAsItsCertificatesKey("ec-sec1-" + curve, "ecparam", "-name", curve, "-genkey", "-noout");
    }
  }

  @Test
  void anEd25519Key() throws Exception {
    readsAsItsCertificatesKey("ed25519", "genpkey", "-algorithm", "ed25519");
  }

  @Test
  void anEncryptedKeyOrACertificateIsRefusedWithAReason() throws Exception {
    Path key = dir.resolve("encrypted.key");
    ClusterPki.openssl(dir, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-aes256", "-pass", "pass:secret", "-out", key.toString());
    Exception encrypted = assertThrows(Exception.class, () -> PrivateKeys.read(Files.readString(key)));
    assertTrue(String.valueOf(encrypted.getMessage()).contains("ENCRYPTED PRIVATE KEY"), "the reason names what was found: " + encrypted);
    Exception notAKey = assertThrows(Exception.class, () -> PrivateKeys.read("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"));
    assertTrue(String.valueOf(notAKey.getMessage()).contains("CERTIFICATE"), "the reason names what was found: " + notAKey);
  }
}
