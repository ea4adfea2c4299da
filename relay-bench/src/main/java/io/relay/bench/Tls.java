package io.relay.bench;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * The generator's side of wss and https: TLS 1.3 with one cipher suite, so that the relay and
 * nginx are measured doing the same cryptography, trusting only the certificate both servers are
 * given (its name checked as a browser would). The WebSocket connections' engines are BoringSSL's
 * (netty-tcnative, as the node's own), so that the generator's share of the two cores spent on
 * TLS is as small as a server's; BoringSSL offers its three TLS 1.3 suites whatever it is asked
 * (it lets no one choose them), so a connection that negotiates another than {@link #suite}
 * fails. The JDK's context, offering the one suite, serves the access API's HTTPS requests.
 */
final class Tls {
  /** The suite every benchmark connection offers: the common one, with AES-NI on x86. */
  static final String DEFAULT_SUITE = "TLS_AES_128_GCM_SHA256";

  private final SSLContext context;
  private final SslContext engines;
  private final String suite;

  private Tls(SSLContext context, SslContext engines, String suite) {
    this.context = context;
    this.engines = engines;
    this.suite = suite;
  }

  /** A client that trusts the PEM certificates in {@code ca} and offers {@code suite} alone. */
  static Tls trusting(Path ca, String suite) {
    try (InputStream pem = Files.newInputStream(ca)) {
      KeyStore trusted = KeyStore.getInstance("PKCS12");
      trusted.load(null, null);
      int i = 0;
      for (Certificate certificate : CertificateFactory.getInstance("X.509").generateCertificates(pem)) {
        trusted.setCertificateEntry("ca-" + i++, certificate);
      }
      if (i == 0) {
        throw new IllegalArgumentException(ca + " holds no certificate");
      }
      TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trust.init(trusted);
      SSLContext context = SSLContext.getInstance("TLSv1.3");
      context.init(null, trust.getTrustManagers(), null);
      OpenSsl.ensureAvailability();
      SslContext engines = SslContextBuilder.forClient().sslProvider(SslProvider.OPENSSL)
          .trustManager(trust).protocols("TLSv1.3").ciphers(List.of(suite)).build();
      return new Tls(context, engines, suite);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + ca, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot trust " + ca + ": " + e.getMessage(), e);
    }
  }

  SSLContext context() {
    return context;
  }

  /** The suite every connection must negotiate. */
  String suite() {
    return suite;
  }

  /** TLS 1.3, the one suite, and the server's name checked against its certificate. */
  SSLParameters parameters() {
    SSLParameters parameters = context.getDefaultSSLParameters();
    parameters.setProtocols(new String[] {"TLSv1.3"});
    parameters.setCipherSuites(new String[] {suite});
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    return parameters;
  }

  /** A client engine (BoringSSL) for one WebSocket connection to {@code host:port}. */
  SSLEngine engine(String host, int port) {
    SSLEngine engine = engines.newEngine(ByteBufAllocator.DEFAULT, host, port);
    SSLParameters parameters = engine.getSSLParameters();
    parameters.setEndpointIdentificationAlgorithm("HTTPS");
    engine.setSSLParameters(parameters);
    return engine;
  }
}
