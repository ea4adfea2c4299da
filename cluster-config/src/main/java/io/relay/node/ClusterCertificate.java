package io.relay.node;

import io.relay.config.KeyPairs;
import io.relay.config.SettingsReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import javax.naming.InvalidNameException;
import javax.naming.ldap.LdapName;
import javax.naming.ldap.Rdn;
import org.apache.pekko.pki.pem.DERPrivateKeyLoader;
import org.apache.pekko.pki.pem.PEMDecoder;

/**
 * The cluster TLS files checked at the start as Pekko's {@code RotatingKeysSSLEngineProvider} will
 * use them, so that a node with files it could never connect with stops at once with a message,
 * rather than failing every link later: the CA certificate, the node certificate issued directly by
 * it and valid now, an RSA key (PKCS#1 or unencrypted PKCS#8) that matches it, and the names (CN and
 * DNS names) the provider compares with its peers'.
 *
 * @param names this certificate's CN and DNS names; a peer must share one
 * @param serial the certificate's serial number, in hex
 * @param notAfter when the certificate expires
 * @param caSubject the CA's subject
 */
record ClusterCertificate(Set<String> names, String serial, Instant notAfter, String caSubject) {
  private static final int DNS_NAME = 2;

  static ClusterCertificate check(ClusterLinks.TlsFiles files) {
    X509Certificate ca = read(files.ca(), "relay.cluster-tls-ca");
    X509Certificate cert = read(files.cert(), "relay.cluster-tls-cert");
    try {
      cert.verify(ca.getPublicKey());
    } catch (GeneralSecurityException e) {
      throw SettingsReader.invalid(
          "relay.cluster-tls-cert",
          "is not issued by the CA of relay.cluster-tls-ca (" + ca.getSubjectX500Principal().getName()
              + "); the node certificate must be signed by that CA directly, with no intermediate");
    }
    try {
      cert.checkValidity();
    } catch (GeneralSecurityException e) {
      throw SettingsReader.invalid("relay.cluster-tls-cert", "is not valid now: " + e.getMessage());
    }
    PrivateKey key;
    try {
      key = DERPrivateKeyLoader.load(PEMDecoder.decode(Files.readString(files.key(), StandardCharsets.US_ASCII)));
    } catch (Exception e) { // Pekko's loader throws the JDK's key errors unchecked
      throw SettingsReader.invalid(
          "relay.cluster-tls-key", "cannot read an RSA private key, PKCS#1 or unencrypted PKCS#8 PEM (the only kind Pekko's provider reads): " + e.getMessage());
    }
    if (!key.getAlgorithm().equals("RSA") || !KeyPairs.matches(key, cert)) {
      throw SettingsReader.invalid("relay.cluster-tls-key", "does not match the certificate of relay.cluster-tls-cert");
    }
    Set<String> names = names(cert);
    if (names.isEmpty()) {
      throw SettingsReader.invalid(
          "relay.cluster-tls-cert", "has neither a CN nor a DNS name; the nodes' certificates must share one (docs/cluster.md, \"Cluster links\")");
    }
    return new ClusterCertificate(names, cert.getSerialNumber().toString(16), cert.getNotAfter().toInstant(), ca.getSubjectX500Principal().getName());
  }

  private static X509Certificate read(Path file, String key) {
    try (InputStream in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    } catch (IOException | GeneralSecurityException | ClassCastException e) {
      throw SettingsReader.invalid(key, "cannot read a PEM certificate from " + file + ": " + e.getMessage());
    }
  }

  /** The CN and the DNS subject alternative names: what the provider compares between peers. */
  static Set<String> names(X509Certificate cert) {
    Set<String> names = new TreeSet<>();
    try {
      for (Rdn rdn : new LdapName(cert.getSubjectX500Principal().getName()).getRdns()) {
        if (rdn.getType().equalsIgnoreCase("CN")) {
          names.add(rdn.getValue().toString());
        }
      }
      if (cert.getSubjectAlternativeNames() != null) {
        for (List<?> san : cert.getSubjectAlternativeNames()) {
          if (san.size() == 2 && Integer.valueOf(DNS_NAME).equals(san.get(0))) {
            names.add(san.get(1).toString());
          }
        }
      }
    } catch (InvalidNameException | GeneralSecurityException e) {
      throw SettingsReader.invalid("relay.cluster-tls-cert", "has a subject that cannot be read: " + e.getMessage());
    }
    return names;
  }
}
