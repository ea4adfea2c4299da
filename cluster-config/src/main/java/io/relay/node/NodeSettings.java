package io.relay.node;

import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * How this node joins its cluster and which servers it runs, read once at startup.
 *
 * @param seedNodes pekko://relay@host:port addresses; empty with no discovery means self-join
 * @param discovery empty, {@code kubernetes-api} or {@code config}
 * @param roles {@code access} and/or {@code relay}
 * @param drainDelay how long a draining node keeps serving after /ready turned false
 */
record NodeSettings(
    List<String> seedNodes,
    String discovery,
    Set<String> roles,
    String host,
    int portManagement,
    int portRemote,
    Duration drainDelay,
    Duration unbindDeadline) {

  private static final Set<String> KNOWN_ROLES = Set.of("access", "relay");
  private static final Set<String> KNOWN_DISCOVERY = Set.of("", "kubernetes-api", "config");

  static NodeSettings create(Config config) {
    SettingsReader r = new SettingsReader(config);
    List<String> seeds = split(r.string("relay.seed-nodes"));
    for (String seed : seeds) {
      if (!seed.matches("pekko://relay@[^:/\\s]+:\\d+")) {
        throw SettingsReader.invalid("relay.seed-nodes", "expected pekko://relay@host:port entries, got '" + seed + "'");
      }
    }
    String discovery = r.string("relay.discovery");
    if (!KNOWN_DISCOVERY.contains(discovery)) {
      throw SettingsReader.invalid("relay.discovery", "expected kubernetes-api, config or nothing, got '" + discovery + "'");
    }
    List<String> roles = split(r.string("relay.roles"));
    if (roles.isEmpty() || !KNOWN_ROLES.containsAll(roles)) {
      throw SettingsReader.invalid("relay.roles", "expected access, relay or access,relay, got '" + r.string("relay.roles") + "'");
    }
    return new NodeSettings(
        seeds,
        discovery,
        Set.copyOf(roles),
        r.string("relay.host"),
        r.port("relay.port-management"),
        r.port("relay.port-remote"),
        r.duration("relay.drain-delay"),
        r.duration("relay.unbind-deadline"));
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
