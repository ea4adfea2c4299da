package io.relay.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * How this node's cluster links (Artery remoting) run: TLS with mutual authentication from PEM
 * files that Pekko's {@code RotatingKeysSSLEngineProvider} reads again when they change, or plain
 * TCP when that is chosen explicitly (or in development mode, which binds loopback only).
 *
 * @param transport {@link #TLS} or {@link #TCP}
 * @param files the certificate, key and CA files; present exactly when the transport is TLS
 * @param development whether plain TCP was chosen by development mode rather than by the operator
 */
record ClusterLinks(String transport, Optional<TlsFiles> files, boolean development) {
  static final String TLS = "tls-tcp";
  static final String TCP = "tcp";
  /** The file names of a Kubernetes TLS Secret (cert-manager's): in {@code relay.cluster-tls-dir}. */
  static final String CERT_FILE = "tls.crt";
  static final String KEY_FILE = "tls.key";
  static final String CA_FILE = "ca.crt";
  private static final String PROVIDER = "org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider";
  private static final String ENGINE = "pekko.remote.artery.ssl.rotating-keys-engine.";

  /** The node's certificate, its private key and the cluster's CA certificate. */
  record TlsFiles(Path cert, Path key, Path ca) {}

  /**
   * Reads {@code relay.cluster-*}; without a transport chosen the node needs the TLS files, except
   * in development mode, which runs plain TCP on loopback.
   *
   * @throws SettingsReader.InvalidSettingException naming the key when the choice is missing or
   *     contradictory
   */
  static ClusterLinks create(Config config, boolean devMode) {
    SettingsReader r = new SettingsReader(config);
    String transport = r.string("relay.cluster-transport").trim();
    if (!transport.isEmpty() && !transport.equals(TLS) && !transport.equals(TCP)) {
      throw SettingsReader.invalid("relay.cluster-transport", "expected tls-tcp or tcp, got '" + transport + "'");
    }
    String dir = r.string("relay.cluster-tls-dir").trim();
    String cert = file(r, "relay.cluster-tls-cert", dir, CERT_FILE);
    String key = file(r, "relay.cluster-tls-key", dir, KEY_FILE);
    String ca = file(r, "relay.cluster-tls-ca", dir, CA_FILE);
    boolean anyFile = !cert.isEmpty() || !key.isEmpty() || !ca.isEmpty();
    if (transport.equals(TCP)) {
      if (anyFile) {
        throw SettingsReader.invalid(
            "relay.cluster-transport", "is tcp (plain) but cluster TLS files are set too; unset RELAY_CLUSTER_TRANSPORT to use them");
      }
      return new ClusterLinks(TCP, Optional.empty(), false);
    }
    if (!anyFile) {
      if (transport.isEmpty() && devMode) {
        return new ClusterLinks(TCP, Optional.empty(), true);
      }
      throw SettingsReader.invalid(
          "relay.cluster-tls-dir",
          "cluster links need TLS: set RELAY_CLUSTER_TLS_DIR (a directory holding tls.crt, tls.key and ca.crt) or "
              + "RELAY_CLUSTER_TLS_CERT, RELAY_CLUSTER_TLS_KEY and RELAY_CLUSTER_TLS_CA; or choose unauthenticated plain "
              + "TCP with RELAY_CLUSTER_TRANSPORT=tcp (docs/cluster.md, \"Cluster links\")");
    }
    require(cert, "relay.cluster-tls-cert");
    require(key, "relay.cluster-tls-key");
    require(ca, "relay.cluster-tls-ca");
    return new ClusterLinks(TLS, Optional.of(new TlsFiles(Path.of(cert), Path.of(key), Path.of(ca))), false);
  }

  private static String file(SettingsReader r, String key, String dir, String name) {
    String file = r.string(key).trim();
    return file.isEmpty() && !dir.isEmpty() ? Path.of(dir, name).toString() : file;
  }

  private static void require(String file, String key) {
    if (file.isEmpty()) {
      throw SettingsReader.invalid(key, "is needed with the other cluster TLS files (or set RELAY_CLUSTER_TLS_DIR)");
    }
  }

  boolean tls() {
    return files.isPresent();
  }

  /**
   * Artery's transport and, for TLS, the provider and its files; the provider builds its TLS
   * context again from the files, for the next connection, once {@code reloadInterval} has passed.
   */
  Config pekkoConfig(Duration reloadInterval) {
    Config config = ConfigFactory.parseMap(Map.of("pekko.remote.artery.transport", transport));
    if (files.isEmpty()) {
      return config;
    }
    TlsFiles f = files.get();
    return config.withFallback(
        ConfigFactory.parseMap(
            Map.of(
                "pekko.remote.artery.ssl.ssl-engine-provider", PROVIDER,
                ENGINE + "cert-file", f.cert().toAbsolutePath().toString(),
                ENGINE + "key-file", f.key().toAbsolutePath().toString(),
                ENGINE + "ca-cert-file", f.ca().toAbsolutePath().toString(),
                ENGINE + "ssl-context-cache-ttl", reloadInterval.toMillis() + "ms")));
  }

  /** Says at the start how the links run: what TLS checks, or loudly, that plain TCP checks nothing. */
  void announce(Logger log, String host, int port, Optional<ClusterCertificate> certificate, Duration reloadInterval) {
    if (certificate.isPresent()) {
      ClusterCertificate c = certificate.get();
      log.info(
          "Cluster links: TLS with mutual authentication on {}:{}. Peers must present a certificate issued by {} "
              + "and sharing a name with this node's {}; this node presents serial {} (valid until {}). The files are "
              + "read again for new links at most every {}.",
          host, port, c.caSubject(), c.names(), c.serial(), c.notAfter(), reloadInterval.toString().substring(2).toLowerCase(Locale.ROOT));
    } else if (development) {
      log.warn(
          "DEVELOPMENT MODE: cluster links are PLAIN TCP on {}:{}, unauthenticated and unencrypted. Any process on this "
              + "machine can join the cluster, read every one-time code and the deny list and take topics. Set "
              + "RELAY_CLUSTER_TLS_DIR for TLS.",
          host, port);
    } else {
      log.warn(
          "RELAY_CLUSTER_TRANSPORT=tcp: cluster links are PLAIN TCP on {}:{}, unauthenticated and unencrypted. Anyone who "
              + "can reach that port can join the cluster, read every one-time code and the deny list, and take topics. "
              + "Use it only where no one else can reach the port; set RELAY_CLUSTER_TLS_DIR for mutual TLS.",
          host, port);
    }
  }
}
