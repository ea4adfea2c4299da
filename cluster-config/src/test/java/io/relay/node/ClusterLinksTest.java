package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import io.relay.testing.ClusterPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a node chooses its cluster links: TLS from the files it is given, checked at the start; plain
 * TCP only when chosen, or in development mode; and no start at all with neither.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterLinksTest {
  private static final String ENGINE = "pekko.remote.artery.ssl.rotating-keys-engine.";
  private Path dir;
  private ClusterPki pki;
  private Path node;

  @BeforeAll
  void makeCertificates(@TempDir Path dir) throws Exception {
    this.dir = dir;
    pki = ClusterPki.create(dir.resolve("ca"), "links-test-ca");
    node = pki.issue(dir.resolve("node"), ClusterPki.CLUSTER_NAME);
  }

  private static RelayNode.Settings load(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put("relay.secret", TestNode.SECRET);
    settings.putAll(overrides);
    return RelayNode.load(ConfigFactory.parseMap(settings));
  }

  private static String failure(Map<String, Object> overrides) {
    return assertThrows(SettingsReader.InvalidSettingException.class, () -> load(overrides)).getMessage();
  }

  @Test
  void aNodeWithASecretAndNeitherTlsFilesNorPlainTcpChosenRefusesToStart() {
    String message = failure(Map.of());
    assertTrue(message.contains("RELAY_CLUSTER_TLS_DIR") && message.contains("RELAY_CLUSTER_TRANSPORT=tcp"), message);
  }

  @Test
  void theTlsDirectoryConfiguresPekkosRotatingKeysProviderWithTheReloadInterval() {
    RelayNode.Settings settings = load(Map.of("relay.cluster-tls-dir", node.toString(), "relay.secret-reload-interval", "2s"));
    Config config = settings.config();
    assertEquals("tls-tcp", config.getString("pekko.remote.artery.transport"));
    assertEquals("org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider", config.getString("pekko.remote.artery.ssl.ssl-engine-provider"));
    assertEquals(node.resolve("tls.crt").toAbsolutePath().toString(), config.getString(ENGINE + "cert-file"));
    assertEquals(node.resolve("tls.key").toAbsolutePath().toString(), config.getString(ENGINE + "key-file"));
    assertEquals(node.resolve("ca.crt").toAbsolutePath().toString(), config.getString(ENGINE + "ca-cert-file"));
    assertEquals(2000, config.getDuration(ENGINE + "ssl-context-cache-ttl").toMillis());
    assertEquals(Set.of(ClusterPki.CLUSTER_NAME), settings.clusterCertificate().orElseThrow().names());
  }

  @Test
  void plainTcpIsChosenExplicitlyOrByDevelopmentModeOnLoopback() {
    RelayNode.Settings chosen = load(Map.of("relay.cluster-transport", "tcp"));
    assertEquals("tcp", chosen.config().getString("pekko.remote.artery.transport"));
    assertFalse(chosen.links().development());
    RelayNode.Settings development = RelayNode.load(ConfigFactory.parseMap(Map.of("relay.host", "127.0.0.1")));
    assertEquals("tcp", development.config().getString("pekko.remote.artery.transport"));
    assertTrue(development.links().development());
    String both = failure(Map.of("relay.cluster-transport", "tcp", "relay.cluster-tls-dir", node.toString()));
    assertTrue(both.startsWith("relay.cluster-transport (RELAY_CLUSTER_TRANSPORT)"), both);
    assertTrue(failure(Map.of("relay.cluster-transport", "udp")).contains("expected tls-tcp or tcp"));
    assertTrue(failure(Map.of("relay.cluster-transport", "tls-tcp")).contains("cluster links need TLS"));
  }

  @Test
  void filesTheProviderCouldNotUseStopTheNodeNamingTheKey() throws Exception {
    ClusterPki other = ClusterPki.create(dir.resolve("other-ca"), "other-ca");
    String wrongCa = failure(Map.of("relay.cluster-tls-dir", node.toString(), "relay.cluster-tls-ca", other.caCert().toString()));
    assertTrue(wrongCa.startsWith("relay.cluster-tls-cert (RELAY_CLUSTER_TLS_CERT): is not issued by the CA"), wrongCa);
    String wrongKey = failure(Map.of("relay.cluster-tls-dir", node.toString(), "relay.cluster-tls-key", pki.caKey().toString()));
    assertTrue(wrongKey.startsWith("relay.cluster-tls-key (RELAY_CLUSTER_TLS_KEY): does not match"), wrongKey);
    Path ecKey = dir.resolve("ec.key");
    Process genpkey =
        new ProcessBuilder("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", ecKey.toString())
            .inheritIO().start();
    assertTrue(genpkey.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && genpkey.exitValue() == 0, "openssl made an EC key");
    String ec = failure(Map.of("relay.cluster-tls-dir", node.toString(), "relay.cluster-tls-key", ecKey.toString()));
    assertTrue(ec.startsWith("relay.cluster-tls-key (RELAY_CLUSTER_TLS_KEY): cannot read an RSA private key"), ec);
    Path missing = dir.resolve("missing");
    Files.createDirectories(missing);
    String none = failure(Map.of("relay.cluster-tls-dir", missing.toString()));
    assertTrue(none.startsWith("relay.cluster-tls-ca (RELAY_CLUSTER_TLS_CA): cannot read a PEM certificate"), none);
    String partial = failure(Map.of("relay.cluster-tls-cert", node.resolve("tls.crt").toString()));
    assertTrue(partial.startsWith("relay.cluster-tls-key (RELAY_CLUSTER_TLS_KEY): is needed"), partial);
  }
}
