package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Settings that stop a node at the start, where it would otherwise run and fail its clients: a
 * wildcard RELAY_HOST for a node set to join others, which could never reach it at that address;
 * an empty RELAY_AUDIENCE, which no token's {@code aud} matches.
 */
class NodeSettingsTest {
  private static RelayNode.Settings load(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put("relay.secret", TestNode.SECRET);
    settings.put("relay.cluster-transport", "tcp");
    settings.putAll(overrides);
    return RelayNode.load(ConfigFactory.parseMap(settings));
  }

  @Test
  void aWildcardHostServesASingleNode() {
    RelayNode.Settings single = load(Map.of("relay.host", "0.0.0.0"));
    assertEquals("0.0.0.0", single.node().host());
  }

  @Test
  void aWildcardHostStopsANodeWithSeedsOrDiscoveryNamingTheSetting() {
    for (Map<String, Object> cluster :
        List.<Map<String, Object>>of(
            Map.of("relay.seed-nodes", "pekko://relay@10.0.0.1:25520"),
            Map.of("relay.discovery", "config", "relay.discovery-endpoints", "10.0.0.1:8558"))) {
      for (String wildcard : new String[] {"0.0.0.0", "::"}) {
        Map<String, Object> overrides = new HashMap<>(cluster);
        overrides.put("relay.host", wildcard);
        String failure = assertThrows(SettingsReader.InvalidSettingException.class, () -> load(overrides)).getMessage();
        assertTrue(failure.startsWith("relay.host (RELAY_HOST): '" + wildcard + "' binds every interface"), failure);
      }
      Map<String, Object> own = new HashMap<>(cluster);
      own.put("relay.host", "10.0.0.2");
      assertEquals("10.0.0.2", load(own).node().host(), "the node's own address joins " + cluster);
    }
  }

  @Test
  void anEmptyAudienceStopsTheNodeNamingTheSetting() {
    String failure =
        assertThrows(SettingsReader.InvalidSettingException.class, () -> load(Map.of("relay.host", "127.0.0.1", "relay.audience", ""))).getMessage();
    assertEquals("relay.audience (RELAY_AUDIENCE): expected a value, got nothing", failure);
  }

  @Test
  void aSeedNodeIsAPekkoAddressWithAPortFrom1To65535() {
    assertEquals(List.of("pekko://relay@10.0.0.1:25520"), load(Map.of("relay.seed-nodes", "pekko://relay@10.0.0.1:25520")).node().seedNodes());
    for (String seed : new String[] {"pekko://relay@10.0.0.1:99999", "pekko://relay@10.0.0.1:0", "pekko://relay@10.0.0.1", "10.0.0.1:25520"}) {
      String failure = assertThrows(SettingsReader.InvalidSettingException.class, () -> load(Map.of("relay.seed-nodes", seed))).getMessage();
      assertTrue(failure.startsWith("relay.seed-nodes (RELAY_SEED_NODES): expected pekko://relay@host:port entries"), seed + ": " + failure);
    }
  }
}
