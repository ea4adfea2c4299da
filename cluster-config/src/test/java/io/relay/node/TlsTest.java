package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With RELAY_TLS_CERT and RELAY_TLS_KEY the node serves HTTPS and WSS itself. */
class TlsTest {
  @TempDir Path dir;

  @Test
  void servesHttpsAndWssWithAPemCertificateAndKey() throws Exception {
    Path cert = dir.resolve("cert.pem");
    Path key = dir.resolve("key.pem");
    Process openssl =
        new ProcessBuilder(
                "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                "-keyout", key.toString(), "-out", cert.toString())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("openssl.log").toFile())
            .start();
    assertTrue(openssl.waitFor(60, TimeUnit.SECONDS), "openssl did not finish");
    assertEquals(0, openssl.exitValue(), "openssl failed (is it installed?): " + Files.readString(dir.resolve("openssl.log")));

    int relayPort = TestNode.freePort();
    try (TestNode node =
        TestNode.start(
            Map.of(
                "relay.tls-cert", cert.toString(),
                "relay.tls-key", key.toString(),
                "relay.port-relay", relayPort,
                "relay.url", "wss://127.0.0.1:" + relayPort))) {
      HttpClient client = HttpClient.newBuilder().sslContext(trusting(cert)).build();
      String token = Tokens.session("lab/tls", "read", "write");
      HttpRequest post =
          HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + node.accessPort + "/session/lab/tls"))
              .header("Authorization", token)
              .POST(HttpRequest.BodyPublishers.noBody())
              .build();
      String first = client.send(post, HttpResponse.BodyHandlers.ofString()).body().replaceAll(".*\"uri\":\"([^\"]+)\".*", "$1");
      String second = client.send(post, HttpResponse.BodyHandlers.ofString()).body().replaceAll(".*\"uri\":\"([^\"]+)\".*", "$1");
      assertTrue(first.startsWith("wss://127.0.0.1:" + node.relayPort + "/session/lab/tls?code="), first);
      try (Participant a = Participant.connect(client, first, true);
          Participant b = Participant.connect(client, second, true)) {
        a.sendText("over tls");
        assertEquals("over tls", b.next().asText());
      }
    }
  }

  private static SSLContext trusting(Path cert) throws Exception {
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
