package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.TestCertificate;
import io.relay.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With RELAY_TLS_CERT and RELAY_TLS_KEY the node serves HTTPS and WSS itself. */
class TlsTest {
  @TempDir Path dir;

  @Test
  void servesHttpsAndWssWithAPemCertificateAndKey() throws Exception {
    TestCertificate certificate = TestCertificate.create(dir);
    int relayPort = TestNode.freePort();
    try (TestNode node = TestNode.start(certificate.nodeSettings(relayPort))) {
      HttpClient client = HttpClient.newBuilder().sslContext(certificate.trustingContext()).build();
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
}
