package io.relay.http;

import io.relay.config.SettingsReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.apache.pekko.pki.pem.DERPrivateKeyLoader;
import org.apache.pekko.pki.pem.PEMDecoder;

/** Builds the HTTPS/WSS context from RELAY_TLS_CERT (PEM chain) and RELAY_TLS_KEY (PEM key). */
public final class TlsContext {
  private static final char[] NO_PASSWORD = new char[0];

  private TlsContext() {}

  /**
   * Loads the certificate chain and private key named by the settings.
   *
   * @throws SettingsReader.InvalidSettingException when either file cannot be read or parsed
   */
  public static SSLContext load(HttpSettings settings) {
    Certificate[] chain;
    try {
      byte[] pem = Files.readAllBytes(Path.of(settings.tlsCert()));
      chain = CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(pem)).toArray(new Certificate[0]);
    } catch (IOException | GeneralSecurityException e) {
      throw SettingsReader.invalid("relay.tls-cert", "cannot read a PEM certificate chain: " + e.getMessage());
    }
    if (chain.length == 0) {
      throw SettingsReader.invalid("relay.tls-cert", "holds no certificate");
    }
    PrivateKey key;
    try {
      key = DERPrivateKeyLoader.load(PEMDecoder.decode(Files.readString(Path.of(settings.tlsKey()), StandardCharsets.US_ASCII)));
    } catch (IOException | RuntimeException e) {
      throw SettingsReader.invalid("relay.tls-key", "cannot read a PEM private key: " + e.getMessage());
    }
    try {
      KeyStore store = KeyStore.getInstance("PKCS12");
      store.load(null, NO_PASSWORD);
      store.setKeyEntry("relay", key, NO_PASSWORD, chain);
      KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, NO_PASSWORD);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), null, new SecureRandom());
      return context;
    } catch (IOException | GeneralSecurityException e) {
      throw SettingsReader.invalid("relay.tls-key", "does not match the certificate: " + e.getMessage());
    }
  }
}
