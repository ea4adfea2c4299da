package io.relay.testing;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.HashMap;
import java.util.Map;

/** The configuration of an actor system that can form a cluster on loopback, for actor tests. */
public final class TestClusterConfig {
  private TestClusterConfig() {}

  /** Cluster provider, an ephemeral loopback port, no JMX; {@code overrides} on top. */
  public static Config with(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put("pekko.actor.provider", "cluster");
    settings.put("pekko.remote.artery.canonical.hostname", "127.0.0.1");
    settings.put("pekko.remote.artery.canonical.port", 0);
    settings.put("pekko.cluster.jmx.enabled", "off");
    settings.putAll(overrides);
    return ConfigFactory.parseMap(settings).withFallback(ConfigFactory.load());
  }

  public static Config get() {
    return with(Map.of());
  }
}
