package io.relay.node;

import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * How this node joins its cluster and which servers it runs, read once at startup.
 *
 * @param seedNodes pekko://relay@host:port addresses; empty with no discovery means self-join
 * @param discovery empty, {@code kubernetes-api} or {@code config}
 * @param bootstrap what Cluster Bootstrap looks up when {@code discovery} is set
 * @param appVersion this node's {@code pekko.cluster.app-version}
 * @param roles {@code access} and/or {@code relay}
 * @param host the servers' bind address and the node's cluster hostname
 * @param managementHost the management port's bind address
 * @param managementWrites whether the management port accepts cluster writes (with a relay:admin
 *     token)
 * @param drainDelay how long a draining node keeps serving after /ready turned false
 */
record NodeSettings(
    List<String> seedNodes,
    String discovery,
    Bootstrap bootstrap,
    String appVersion,
    Set<String> roles,
    String host,
    String managementHost,
    boolean managementWrites,
    int portManagement,
    int portRemote,
    Duration drainDelay,
    Duration unbindDeadline) {

  private static final Set<String> KNOWN_ROLES = Set.of("access", "relay");
  private static final Set<String> KNOWN_DISCOVERY = Set.of("", "kubernetes-api", "config");
  static final String KUBERNETES_API = "kubernetes-api";
  static final String CONFIG = "config";
  private static final String DNS_LABEL = "[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?";
  private static final String APP_VERSION = "\\d+(\\.\\d+)*(-[A-Za-z0-9.]+)?";
  private static final int MAX_CONTACT_POINTS = 1000;

  /**
   * What Cluster Bootstrap looks up.
   *
   * @param serviceName the service whose contact points are looked up; fills %s in the selector
   * @param labelSelector kubernetes-api: the label selector of the node pods
   * @param requiredContactPoints contact points needed before a new cluster is formed
   * @param endpoints config: the contact points (management endpoints)
   */
  record Bootstrap(String serviceName, String labelSelector, int requiredContactPoints, List<Endpoint> endpoints) {}

  /** A contact point: a node's management host and port. */
  record Endpoint(String host, int port) {}

  static NodeSettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    List<String> seeds = split(r.string("relay.seed-nodes"));
    for (String seed : seeds) {
      if (!seed.matches("pekko://relay@[^:/\\s]+:\\d{1,5}") || !validPort(seed.substring(seed.lastIndexOf(':') + 1))) {
        throw SettingsReader.invalid("relay.seed-nodes", "expected pekko://relay@host:port entries, got '" + seed + "'");
      }
    }
    String discovery = r.string("relay.discovery");
    if (!KNOWN_DISCOVERY.contains(discovery)) {
      throw SettingsReader.invalid("relay.discovery", "expected kubernetes-api, config or nothing, got '" + discovery + "'");
    }
    if (!discovery.isEmpty() && !seeds.isEmpty()) {
      throw SettingsReader.invalid("relay.discovery", "set either RELAY_DISCOVERY or RELAY_SEED_NODES, not both");
    }
    Bootstrap bootstrap = bootstrap(r, discovery);
    String appVersion = r.string("relay.app-version");
    if (!appVersion.matches(APP_VERSION)) {
      throw SettingsReader.invalid("relay.app-version", "expected digits and dots with an optional -qualifier such as 7 or 1.4.0, got '" + appVersion + "'");
    }
    List<String> roles = split(r.string("relay.roles"));
    if (roles.isEmpty() || !KNOWN_ROLES.containsAll(roles)) {
      throw SettingsReader.invalid("relay.roles", "expected access, relay or access,relay, got '" + r.string("relay.roles") + "'");
    }
    String host = r.string("relay.host");
    if ((!seeds.isEmpty() || !discovery.isEmpty()) && isWildcard(host)) {
      throw SettingsReader.invalid(
          "relay.host",
          "'" + host + "' binds every interface, but it is also the address other nodes reach this one at, and RELAY_SEED_NODES "
              + "or RELAY_DISCOVERY makes a cluster of several nodes: set it to this node's own address (on Kubernetes the pod IP)");
    }
    String managementHost = r.string("relay.management-host").trim();
    if (managementHost.isEmpty()) {
      throw SettingsReader.invalid("relay.management-host", "expected an address to bind, such as 127.0.0.1, the pod IP or 0.0.0.0");
    }
    return new NodeSettings(
        seeds,
        discovery,
        bootstrap,
        appVersion,
        Set.copyOf(roles),
        host,
        managementHost,
        r.bool("relay.management-writes"),
        r.port("relay.port-management"),
        r.port("relay.port-remote"),
        r.duration("relay.drain-delay"),
        r.duration("relay.unbind-deadline"));
  }

  private static boolean validPort(String digits) {
    int port = Integer.parseInt(digits);
    return port >= 1 && port <= 65535;
  }

  /**
   * Whether {@code host} is the wildcard address (0.0.0.0, ::), which binds every interface. Only
   * an address is looked at: a name is never the wildcard, and is not looked up here.
   */
  static boolean isWildcard(String host) {
    if (!host.contains(":") && !host.matches("[0-9.]+")) {
      return false;
    }
    try {
      return InetAddress.getByName(host).isAnyLocalAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private static Bootstrap bootstrap(SettingsReader r, String discovery) {
    String serviceName = r.string("relay.discovery-service-name");
    if (!serviceName.matches(DNS_LABEL)) {
      throw SettingsReader.invalid("relay.discovery-service-name", "expected a DNS label (a-z, 0-9, '-'), got '" + serviceName + "'");
    }
    String selector = r.string("relay.discovery-label-selector").trim();
    if (discovery.equals(KUBERNETES_API) && selector.isEmpty()) {
      throw SettingsReader.invalid("relay.discovery-label-selector", "kubernetes-api discovery needs a label selector such as app.kubernetes.io/name=%s");
    }
    int required = r.integer("relay.discovery-required-contact-points", 1, MAX_CONTACT_POINTS);
    List<Endpoint> endpoints = new ArrayList<>();
    for (String entry : split(r.string("relay.discovery-endpoints"))) {
      endpoints.add(endpoint(entry));
    }
    if (discovery.equals(CONFIG) && endpoints.isEmpty()) {
      throw SettingsReader.invalid("relay.discovery-endpoints", "config discovery needs the nodes' management endpoints, e.g. 127.0.0.1:8558,127.0.0.1:8568");
    }
    return new Bootstrap(serviceName, selector, required, List.copyOf(endpoints));
  }

  private static Endpoint endpoint(String entry) {
    int colon = entry.lastIndexOf(':');
    String host = colon > 0 ? entry.substring(0, colon) : "";
    String port = colon > 0 ? entry.substring(colon + 1) : "";
    if (host.isEmpty() || !port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
      throw SettingsReader.invalid("relay.discovery-endpoints", "expected host:port entries, got '" + entry + "'");
    }
    return new Endpoint(host, Integer.parseInt(port));
  }

  private static List<String> split(String list) {
    return Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
  }

  boolean runsAccess() {
    return roles.contains("access");
  }

  boolean runsRelay() {
    return roles.contains("relay");
  }
}
