package io.relay.node;

import io.relay.testing.TestCertificate;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** {@link ConformanceCases} over WSS served by the node itself: the same protocol core over TLS. */
class TlsConformanceTest extends ConformanceCases {
  @BeforeAll
  void start(@TempDir Path dir) throws Exception {
    TestCertificate certificate = TestCertificate.create(dir);
    Map<String, Object> settings = new HashMap<>(SETTINGS);
    settings.putAll(certificate.nodeSettings(TestNode.freePort()));
    node = TestNode.start(settings);
    tls = certificate.trustingContext();
    access = new AccessClient(node, HttpClient.newBuilder().sslContext(tls).build());
  }
}
