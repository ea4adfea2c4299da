package io.relay.testing;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.Map;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A self-signed certificate for 127.0.0.1 made by openssl, and a TLS context that trusts it. */
public record TestCertificate(Path cert, Path key) {
  /** Makes one in {@code dir} ({@code cert.pem}, {@code key.pem}); needs openssl. */
  public static TestCertificate create(Path dir) throws IOException, InterruptedException {
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    ClusterPki.openssl(
        dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
        "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key.toString(), "-out", cert.toString());
    return new TestCertificate(cert, key);
  }

  /** Settings for a node that serves HTTPS and WSS with this certificate on {@code relayPort}. */
  public Map<String, Object> nodeSettings(int relayPort) {
    return Map.of(
        "relay.tls-cert", cert.toString(),
        "relay.tls-key", key.toString(),
        "relay.port-relay", relayPort,
        "relay.url", "wss://127.0.0.1:" + relayPort);
  }

  /** A client context that trusts this certificate alone. */
  public SSLContext trustingContext() throws IOException, GeneralSecurityException {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(cert)) {
      trust.setCertificateEntry("relay", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(trust);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, factory.getTrustManagers(), null);
    return context;
  }
}
