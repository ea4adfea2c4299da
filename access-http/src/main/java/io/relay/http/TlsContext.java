package io.relay.http;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.OpenSslCachingX509KeyManagerFactory;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.KeyManagerFactoryWrapper;
import io.relay.config.KeyPairs;
import io.relay.config.PrivateKeys;
import io.relay.config.SettingsReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.function.LongSupplier;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedKeyManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the HTTPS/WSS context from RELAY_TLS_CERT (PEM chain) and RELAY_TLS_KEY (PEM key).
 *
 * <p>The files are read again at most once per {@code relay.secret-reload-interval}, at a TLS
 * handshake: a certificate renewed on disk (cert-manager writes a new certificate and key into the
 * mounted Secret) is presented from the next handshakes on, without a restart. A pair that cannot
 * be read, or whose key does not match its certificate (one file written and not the other yet),
 * leaves the pair in use as it was and is logged; at the start it stops the node.
 */
public final class TlsContext {
  private static final Logger LOG = LoggerFactory.getLogger(TlsContext.class);

  private TlsContext() {}

  /**
   * The server context for the certificate chain and private key named by the settings: on
   * BoringSSL (netty-tcnative) where it loads, on the JDK's TLS otherwise. Each handshake asks
   * the key manager for the pair, so a renewed pair is picked up; the key material of each pair
   * read is cached by BoringSSL under the pair's own alias.
   *
   * @throws SettingsReader.InvalidSettingException when either file cannot be read or parsed, or
   *     the key does not match the certificate
   */
  public static SslContext load(HttpSettings settings) {
    X509ExtendedKeyManager keys = keys(settings, System::nanoTime);
    boolean openSsl = OpenSsl.isAvailable();
    KeyManagerFactory factory =
        openSsl ? new OpenSslCachingX509KeyManagerFactory(new KeyManagerFactoryWrapper(keys)) : new KeyManagerFactoryWrapper(keys);
    LOG.info(
        "TLS on {}",
        openSsl ? "BoringSSL (netty-tcnative " + OpenSsl.versionString() + ")" : "the JDK's TLS (BoringSSL did not load: " + OpenSsl.unavailabilityCause() + ")");
    try {
      return SslContextBuilder.forServer(factory).sslProvider(openSsl ? SslProvider.OPENSSL : SslProvider.JDK).build();
    } catch (SSLException e) {
      throw new IllegalStateException("cannot build the TLS context", e);
    }
  }

  /** The reloading key manager of the pair named by the settings; the files are read at once. */
  static X509ExtendedKeyManager keys(HttpSettings settings, LongSupplier nanoClock) {
    return new ReloadingKeys(
        Path.of(settings.tlsCert()), Path.of(settings.tlsKey()), new ReloadInterval(settings.secretReloadInterval(), nanoClock));
  }

  /** A certificate chain and its private key, numbered in the order they were read. */
  private record Pair(long version, X509Certificate[] chain, PrivateKey key) {
    String alias() {
      return "relay-" + version;
    }
  }

  /** Reads the pair, checking that the key is the certificate's; throws the settings' error. */
  private static Pair read(Path certFile, Path keyFile, long version) {
    X509Certificate[] chain;
    try {
      byte[] pem = Files.readAllBytes(certFile);
      chain =
          CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem)).stream()
              .map(c -> (X509Certificate) c)
              .toArray(X509Certificate[]::new);
    } catch (IOException | GeneralSecurityException | ClassCastException e) {
      throw SettingsReader.invalid("relay.tls-cert", "cannot read a PEM certificate chain: " + e.getMessage());
    }
    if (chain.length == 0) {
      throw SettingsReader.invalid("relay.tls-cert", "holds no certificate");
    }
    PrivateKey key;
    try {
      key = PrivateKeys.read(Files.readString(keyFile, StandardCharsets.US_ASCII));
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      throw SettingsReader.invalid("relay.tls-key", "cannot read a PEM private key: " + e.getMessage());
    }
    if (!KeyPairs.matches(key, chain[0])) {
      throw SettingsReader.invalid("relay.tls-key", "does not match the certificate");
    }
    return new Pair(version, chain, key);
  }

  /**
   * The server's key manager: one pair, read again from its files when the reload interval has
   * passed. A handshake picks an alias that names the pair it began with, so that its chain and key
   * are of the same pair even while a new one is read; the pair before the last stays known for the
   * handshakes that began with it.
   */
  private static final class ReloadingKeys extends X509ExtendedKeyManager {
    private final Path certFile;
    private final Path keyFile;
    private final ReloadInterval reload;
    private volatile Pair current;
    private volatile Pair before;

    ReloadingKeys(Path certFile, Path keyFile, ReloadInterval reload) {
      this.certFile = certFile;
      this.keyFile = keyFile;
      this.reload = reload;
      this.current = read(certFile, keyFile, 0);
      this.before = current;
    }

    /** The pair to present now, read again first when the interval has passed. */
    private Pair now() {
      if (reload.due()) {
        Pair was = current;
        try {
          Pair read = read(certFile, keyFile, was.version() + 1);
          if (!read.chain()[0].equals(was.chain()[0]) || !read.key().equals(was.key())) {
            before = was;
            current = read;
            LOG.info("TLS certificate read again from {}: now presenting {}, valid until {}", certFile,
                read.chain()[0].getSubjectX500Principal().getName(), read.chain()[0].getNotAfter().toInstant());
          }
        } catch (SettingsReader.InvalidSettingException e) {
          LOG.warn("cannot read the TLS certificate and key again ({}); presenting the ones in use", e.getMessage());
        }
      }
      return current;
    }

    private Pair byAlias(String alias) {
      Pair now = current;
      if (now.alias().equals(alias)) {
        return now;
      }
      Pair was = before;
      return was.alias().equals(alias) ? was : null;
    }

    @Override
    public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
      return chooseServerAlias(keyType, issuers, null);
    }

    @Override
    public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
      Pair pair = now();
      return keyType == null || keyType.equals(pair.key().getAlgorithm()) || keyType.startsWith(pair.key().getAlgorithm() + "_")
          ? pair.alias()
          : null;
    }

    @Override
    public String[] getServerAliases(String keyType, Principal[] issuers) {
      String alias = chooseServerAlias(keyType, issuers, null);
      return alias == null ? null : new String[] {alias};
    }

    @Override
    public X509Certificate[] getCertificateChain(String alias) {
      Pair pair = byAlias(alias);
      return pair == null ? null : pair.chain().clone();
    }

    @Override
    public PrivateKey getPrivateKey(String alias) {
      Pair pair = byAlias(alias);
      return pair == null ? null : pair.key();
    }

    @Override
    public String[] getClientAliases(String keyType, Principal[] issuers) {
      return null; // a server's key manager: it never authenticates as a client
    }

    @Override
    public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
      return null;
    }
  }
}
