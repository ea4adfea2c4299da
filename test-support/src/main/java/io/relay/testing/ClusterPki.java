package io.relay.testing;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.net.InetSocketAddress;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A certificate authority for a test cluster's links, made by openssl: it issues node
 * certificates into directories laid out as the kubelet lays out a mounted TLS Secret
 * ({@code tls.crt}, {@code tls.key}, {@code ca.crt} linked through {@code ..data} to the current
 * generation), so that a renewal replaces all three files at once, as on Kubernetes.
 */
public record ClusterPki(Path dir, Path caCert, Path caKey) {
  /** The name every node certificate of a test cluster carries (CN and DNS name). */
  public static final String CLUSTER_NAME = "relay-cluster";
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String DATA = "..data";

  /** Makes a CA named {@code name} in {@code dir}; needs openssl. */
  public static ClusterPki create(Path dir, String name) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    Path cert = dir.resolve("ca.crt");
    Path key = dir.resolve("ca.key");
    openssl(dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=" + name,
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", key.toString(), "-out", cert.toString());
    return new ClusterPki(dir, cert, key);
  }

  /**
   * Issues a node certificate named {@code name} (CN and DNS name, plus IP 127.0.0.1) into
   * {@code nodeDir}, replacing whatever it held at once; returns {@code nodeDir}.
   */
  public Path issue(Path nodeDir, String name) throws IOException, InterruptedException {
    Files.createDirectories(nodeDir);
    Path generation = Files.createTempDirectory(nodeDir, "..gen-");
    Path ext = generation.resolve("ext.cnf");
    Files.writeString(
        ext,
        "subjectAltName=DNS:" + name + ",IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"
            + "keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n");
    Path csr = generation.resolve("tls.csr");
    openssl(generation, "req", "-new", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
        "-keyout", generation.resolve("tls.key").toString(), "-out", csr.toString());
    openssl(generation, "x509", "-req", "-in", csr.toString(), "-CA", caCert.toString(), "-CAkey", caKey.toString(),
        "-set_serial", "0x" + new BigInteger(64, RANDOM).toString(16), "-days", "1", "-extfile", ext.toString(),
        "-out", generation.resolve("tls.crt").toString());
    Files.copy(caCert, generation.resolve("ca.crt"));
    Path link = nodeDir.resolve(DATA + ".tmp");
    Files.deleteIfExists(link);
    Files.createSymbolicLink(link, generation.getFileName());
    Files.move(link, nodeDir.resolve(DATA), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    for (String file : List.of("tls.crt", "tls.key", "ca.crt")) {
      if (!Files.exists(nodeDir.resolve(file), java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
        Files.createSymbolicLink(nodeDir.resolve(file), Path.of(DATA, file));
      }
    }
    return nodeDir;
  }

  /** The node certificate {@code nodeDir} holds now. */
  public static X509Certificate certificate(Path nodeDir) throws IOException, CertificateException {
    try (InputStream in = Files.newInputStream(nodeDir.resolve("tls.crt"))) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /**
   * The certificate a node serves on its remoting port ({@code port}), read by a TLS client that
   * authenticates with the certificate in {@code clientDir} and trusts this CA alone.
   */
  public X509Certificate presentedAt(int port, Path clientDir) throws IOException, GeneralSecurityException {
    SSLContext context = SSLContext.getInstance("TLSv1.3");
    context.init(keyManagers(clientDir), trustManagers(), null);
    try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      socket.setSoTimeout(5_000);
      socket.startHandshake();
      return (X509Certificate) socket.getSession().getPeerCertificates()[0];
    }
  }

  private static KeyManager[] keyManagers(Path nodeDir) throws IOException, GeneralSecurityException {
    String pem = Files.readString(nodeDir.resolve("tls.key"));
    byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
    PrivateKey key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("node", key, new char[0], new java.security.cert.Certificate[] {certificate(nodeDir)});
    KeyManagerFactory factory = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    factory.init(store, new char[0]);
    return factory.getKeyManagers();
  }

  private TrustManager[] trustManagers() throws IOException, GeneralSecurityException {
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    try (InputStream in = Files.newInputStream(caCert)) {
      store.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    factory.init(store);
    return factory.getTrustManagers();
  }

  /** Runs openssl with {@code args}, its output in {@code dir}'s openssl.log; fails the test if it fails. */
  public static void openssl(Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Path log = dir.resolve("openssl.log");
    Process openssl = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    if (!openssl.waitFor(60, TimeUnit.SECONDS)) {
      openssl.destroyForcibly();
      throw new AssertionError("openssl did not finish within 60 s: " + command);
    }
    if (openssl.exitValue() != 0) {
      throw new AssertionError("openssl failed (is it installed?): " + command + "\n" + Files.readString(log));
    }
  }
}
