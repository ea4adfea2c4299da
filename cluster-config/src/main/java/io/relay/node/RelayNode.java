package io.relay.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import io.netty.handler.ssl.SslContext;
import io.relay.RelaySettings;
import io.relay.deny.DenyList;
import io.relay.http.HttpSettings;
import io.relay.http.TlsContext;
import io.relay.http.TokenKeys;
import io.relay.http.server.PortSettings;
import io.relay.memory.BufferChecks;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A relay node: its configuration, read once into settings records, and how it joins its
 * cluster: alone, through seed nodes, or through Cluster Bootstrap when a discovery method is
 * set. What runs on the node is its guardian's ({@link NodeGuardian}).
 */
public final class RelayNode {
  private static final Logger LOG = LoggerFactory.getLogger(RelayNode.class);
  /** Slack a shutdown phase gets beyond the time its task is designed to take. */
  static final Duration PHASE_MARGIN = Duration.ofSeconds(5);

  private RelayNode() {}

  /**
   * The settings a node runs with, validated.
   *
   * @param practableOnly the practable relay's settings set in the environment that this relay
   *     ignores, named in a warning at start
   */
  record Settings(
      Config config,
      NodeSettings node,
      HttpSettings http,
      TokenKeys keys,
      RelaySettings relay,
      PortSettings ports,
      Optional<SslContext> tls,
      ClusterLinks links,
      Optional<ClusterCertificate> clusterCertificate,
      List<PractableSettings.Ignored> practableOnly) {}

  /**
   * Loads and validates the configuration: {@code overrides} first, then the environment
   * variables, application.conf and the modules' defaults.
   *
   * @throws io.relay.config.SettingsReader.InvalidSettingException naming the bad key
   */
  static Settings load(Config overrides) {
    return load(overrides, System.getenv());
  }

  /**
   * Loads and validates the configuration as {@link #load(Config)} does; {@code environment} is
   * looked through for the practable relay's settings that this relay ignores.
   */
  static Settings load(Config overrides, Map<String, String> environment) {
    // before the TLS context, the first thing that may make one of Netty's buffers
    BufferChecks.watch();
    Config loaded =
        ConfigFactory.load(overrides.withFallback(ConfigFactory.parseResources("application.conf")));
    NodeSettings node = NodeSettings.create(loaded);
    HttpSettings http = HttpSettings.create(loaded);
    TokenKeys keys = TokenKeys.from(http);
    RelaySettings relay = RelaySettings.create(loaded);
    PortSettings ports = PortSettings.create(loaded);
    if (http.devMode() && !isLoopback(node.host())) {
      throw io.relay.config.SettingsReader.invalid(
          "relay.host", "without RELAY_SECRET or RELAY_SECRET_FILE the node binds to loopback only; set one to bind " + node.host());
    }
    if (http.devMode() && !isLoopback(node.managementHost())) {
      throw io.relay.config.SettingsReader.invalid(
          "relay.management-host",
          "without RELAY_SECRET or RELAY_SECRET_FILE the node binds to loopback only; set one to bind " + node.managementHost());
    }
    ClusterLinks links = ClusterLinks.create(loaded, http.devMode());
    Optional<ClusterCertificate> clusterCertificate = links.files().map(ClusterCertificate::check);
    Config cluster =
        ConfigFactory.empty()
            .withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(node.seedNodes()))
            .withValue("pekko.cluster.roles", ConfigValueFactory.fromIterable(clusterRoles(node)))
            .withValue("pekko.cluster.app-version", ConfigValueFactory.fromAnyRef(node.appVersion()))
            .withValue("pekko.management.http.bind-hostname", ConfigValueFactory.fromAnyRef(node.managementHost()))
            .withValue("pekko.management.http.hostname", ConfigValueFactory.fromAnyRef(managementContactHost(node)))
            .withValue(
                "pekko.coordinated-shutdown.phases.before-service-unbind.timeout",
                millis(node.drainDelay().plus(PHASE_MARGIN)))
            .withValue( // a graceful close: up to the close timeout for what is queued, then as long for the client's answer
                "pekko.coordinated-shutdown.phases.service-unbind.timeout",
                millis(relay.drainSpread().plus(relay.closeTimeout().multipliedBy(2)).plus(PHASE_MARGIN)))
            .withValue(
                "pekko.coordinated-shutdown.phases.service-requests-done.timeout",
                millis(node.unbindDeadline().plus(PHASE_MARGIN)));
    Optional<SslContext> tls = http.tls() ? Optional.of(TlsContext.load(http)) : Optional.empty();
    Config pekko = cluster.withFallback(links.pekkoConfig(http.secretReloadInterval())).withFallback(bootstrapConfig(node));
    return new Settings(
        pekko.withFallback(loaded), node, http, keys, relay, ports, tls, links, clusterCertificate, PractableSettings.found(environment));
  }

  /** The node's roles, and that it confirms changes of the deny list ({@link DenyList#CONFIRMS_CHANGES}). */
  private static List<String> clusterRoles(NodeSettings node) {
    List<String> roles = new ArrayList<>(node.roles());
    roles.add(DenyList.CONFIRMS_CHANGES);
    return roles;
  }

  /**
   * The host other nodes reach this node's management port at (its Cluster Bootstrap contact
   * point): the management host, or the node's own host when the management port binds every
   * interface.
   */
  private static String managementContactHost(NodeSettings node) {
    return NodeSettings.isWildcard(node.managementHost()) ? node.host() : node.managementHost();
  }

  /**
   * Cluster Bootstrap's settings for the chosen discovery method: the contact points are the
   * nodes' management endpoints, found by the pod label selector (kubernetes-api) or listed
   * (config).
   */
  private static Config bootstrapConfig(NodeSettings node) {
    if (node.discovery().isEmpty()) {
      return ConfigFactory.empty();
    }
    NodeSettings.Bootstrap bootstrap = node.bootstrap();
    Config config =
        ConfigFactory.empty()
            .withValue("pekko.discovery.method", ConfigValueFactory.fromAnyRef(node.discovery()))
            .withValue(
                "pekko.management.cluster.bootstrap.contact-point-discovery.service-name",
                ConfigValueFactory.fromAnyRef(bootstrap.serviceName()))
            .withValue(
                "pekko.management.cluster.bootstrap.contact-point-discovery.required-contact-point-nr",
                ConfigValueFactory.fromAnyRef(bootstrap.requiredContactPoints()));
    if (node.discovery().equals(NodeSettings.KUBERNETES_API)) {
      return config.withValue(
          "pekko.discovery.kubernetes-api.pod-label-selector", ConfigValueFactory.fromAnyRef(bootstrap.labelSelector()));
    }
    List<Map<String, Object>> endpoints =
        bootstrap.endpoints().stream()
            .map(e -> Map.<String, Object>of("host", e.host(), "port", e.port()))
            .toList();
    // the listed ports are management ports and may share one host, so none are filtered out
    return config
        .withValue(
            ConfigUtil.joinPath("pekko", "discovery", "config", "services", bootstrap.serviceName(), "endpoints"),
            ConfigValueFactory.fromIterable(endpoints))
        .withValue(
            "pekko.management.cluster.bootstrap.contact-point.filter-on-fallback-port", ConfigValueFactory.fromAnyRef(false));
  }

  /** Starts a node; it joins its cluster and binds its servers in the background. */
  static ActorSystem<Void> start(Settings settings) {
    LOG.info("relay {} starting", RelayCli.version());
    if (settings.http().devMode()) {
      LOG.warn(
          "Neither RELAY_SECRET nor RELAY_SECRET_FILE is set: DEVELOPMENT MODE. Tokens are checked against the documented "
              + "development key, which anyone can use; binding to loopback only.");
    }
    settings.links().announce(LOG, settings.node().host(), settings.node().portRemote(), settings.clusterCertificate(), settings.http().secretReloadInterval());
    PractableSettings.warn(LOG, settings.practableOnly());
    return ActorSystem.create(NodeGuardian.create(settings), "relay", settings.config());
  }

  private static ConfigValue millis(Duration duration) {
    return ConfigValueFactory.fromAnyRef(duration.toMillis() + "ms");
  }

  private static boolean isLoopback(String host) {
    try {
      return InetAddress.getByName(host).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
