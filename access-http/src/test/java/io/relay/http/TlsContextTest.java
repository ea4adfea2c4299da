package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import io.relay.testing.ClusterPki;
import io.relay.testing.TestCertificate;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The server's certificate and key, read from their PEM files, and read again when they are
 * renewed on disk (as cert-manager renews a mounted certificate), without a restart.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TlsContextTest {
  private static final Duration RELOAD = Duration.ofSeconds(10);

  @TempDir Path dir;
  private TestCertificate first;
  private TestCertificate second;
  /** The context's clock, in nanoseconds: the test moves it past the reload interval. */
  private final AtomicLong nanos = new AtomicLong();

  @BeforeAll
  void makeCertificates(@TempDir Path certificates) throws Exception {
    first = TestCertificate.create(Files.createDirectories(certificates.resolve("first")));
    second = TestCertificate.create(Files.createDirectories(certificates.resolve("second")));
  }

  private HttpSettings settings(Path cert, Path key) {
    return HttpSettings.create(
        ConfigFactory.parseMap(
                Map.of("relay.tls-cert", cert.toString(), "relay.tls-key", key.toString(), "relay.secret-reload-interval", RELOAD.toMillis() + "ms"))
            .withFallback(ConfigFactory.load()));
  }

  /** The files a node is configured with, holding {@code pair}'s certificate and key. */
  private Path[] serving(TestCertificate pair) throws IOException {
    Path live = Files.createDirectories(dir.resolve("live"));
    Path[] files = {live.resolve("tls.crt"), live.resolve("tls.key")};
    install(pair.cert(), files[0]);
    install(pair.key(), files[1]);
    return files;
  }

  private static void install(Path from, Path to) throws IOException {
    Path next = to.resolveSibling(to.getFileName() + ".next");
    Files.copy(from, next, StandardCopyOption.REPLACE_EXISTING);
    Files.move(next, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** The certificate a TLS server with {@code context} presents to a client's handshake. */
  private static X509Certificate presented(SSLContext context) throws Exception {
    try (SSLServerSocket server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Thread accept =
          new Thread(() -> {
            try (SSLSocket accepted = (SSLSocket) server.accept()) {
              accepted.startHandshake();
            } catch (IOException ignored) {
              // the client's check decides
            }
          });
      accept.start();
      SSLContext client = SSLContext.getInstance("TLS");
      client.init(null, new TrustManager[] {new AnyServer()}, null);
      try (SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket(InetAddress.getLoopbackAddress(), server.getLocalPort())) {
        socket.startHandshake();
        return (X509Certificate) socket.getSession().getPeerCertificates()[0];
      } finally {
        accept.join(10_000);
      }
    }
  }

  private static X509Certificate certificate(TestCertificate pair) throws Exception {
    try (InputStream in = Files.newInputStream(pair.cert())) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /** A JDK context over the node's reloading key manager, on the test's clock. */
  private SSLContext context(HttpSettings settings) throws Exception {
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(new KeyManager[] {TlsContext.keys(settings, nanos::get)}, null, null);
    return context;
  }

  @Test
  void anEcdsaCertificateWithItsKeyInSec1AsCertManagerWritesItIsPresented() throws Exception {
    Path ec = Files.createDirectories(dir.resolve("ec"));
    Path key = ec.resolve("tls.key");
    Path cert = ec.resolve("tls.crt");
    ClusterPki.openssl(ec, "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key.toString());
    ClusterPki.openssl(ec, "req", "-x509", "-key", key.toString(), "-subj", "/CN=127.0.0.1", "-days", "1", "-out", cert.toString());
    assertEquals(certificate(new TestCertificate(cert, key)), presented(context(settings(cert, key))));
  }

  @Test
  void aCertificateRenewedOnDiskIsPresentedOnceTheReloadIntervalHasPassed() throws Exception {
    Path[] files = serving(first);
    SSLContext context = context(settings(files[0], files[1]));
    assertEquals(certificate(first), presented(context));

    install(second.cert(), files[0]);
    install(second.key(), files[1]);
    assertEquals(certificate(first), presented(context), "not read again before the interval");
    nanos.addAndGet(RELOAD.toNanos());
    assertEquals(certificate(second), presented(context), "the renewed certificate, without a restart");
  }

  @Test
  void aKeyThatDoesNotMatchItsCertificateYetLeavesThePairInUse() throws Exception {
    Path[] files = serving(first);
    SSLContext context = context(settings(files[0], files[1]));
    install(second.cert(), files[0]); // the certificate written, its key not yet
    nanos.addAndGet(RELOAD.toNanos());
    assertEquals(certificate(first), presented(context), "the pair in use until both files are new");
    install(second.key(), files[1]);
    nanos.addAndGet(RELOAD.toNanos());
    assertEquals(certificate(second), presented(context));
  }

  @Test
  void aKeyThatDoesNotMatchItsCertificateAtTheStartStopsTheNode() {
    SettingsReader.InvalidSettingException mismatch =
        assertThrows(SettingsReader.InvalidSettingException.class, () -> TlsContext.load(settings(first.cert(), second.key())));
    assertTrue(mismatch.getMessage().contains("does not match the certificate"), mismatch.getMessage());
  }

  /** Trusts any server: the test looks at what it presents. */
  private static final class AnyServer implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
