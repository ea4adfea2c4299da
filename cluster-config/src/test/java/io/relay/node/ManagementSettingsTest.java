package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * How the management port's host and write settings are read: where Pekko Management binds and
 * what contact point it advertises, loopback only without a secret, and bad values named.
 */
class ManagementSettingsTest {
  private static RelayNode.Settings load(Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>();
    settings.put("relay.secret", TestNode.SECRET);
    settings.put("relay.host", "127.0.0.1");
    settings.put("relay.cluster-transport", "tcp");
    settings.putAll(overrides);
    return RelayNode.load(ConfigFactory.parseMap(settings));
  }

  private static String loadFailure(Map<String, Object> overrides) {
    return assertThrows(SettingsReader.InvalidSettingException.class, () -> load(overrides)).getMessage();
  }

  @Test
  void byDefaultTheManagementPortBindsTheNodesHostAndIsReadOnly() {
    RelayNode.Settings settings = load(Map.of("relay.host", "127.0.0.3"));
    assertEquals("127.0.0.3", settings.node().managementHost());
    assertEquals("127.0.0.3", settings.config().getString("pekko.management.http.bind-hostname"));
    assertEquals("127.0.0.3", settings.config().getString("pekko.management.http.hostname"));
    assertFalse(settings.node().managementWrites(), "cluster writes are off by default");
    assertTrue(settings.config().getBoolean("pekko.management.http.route-providers-read-only"));
  }

  @Test
  void readinessNeedsTheNodeUpNotWeaklyUpBesideItsOwnCheck() {
    Config config = load(Map.of()).config();
    assertEquals(
        "org.apache.pekko.management.cluster.scaladsl.ClusterMembershipCheck",
        config.getString("pekko.management.health-checks.readiness-checks.cluster-membership"));
    assertEquals(List.of("Up"), config.getStringList("pekko.management.cluster.health-check.ready-states"));
    assertEquals("io.relay.node.ReadinessCheck", config.getString("pekko.management.health-checks.readiness-checks.relay"));
  }

  @Test
  void theManagementHostIsItsOwnSettingAndAWildcardAdvertisesTheNodesHost() {
    RelayNode.Settings own = load(Map.of("relay.management-host", "127.0.0.2"));
    assertEquals("127.0.0.2", own.config().getString("pekko.management.http.bind-hostname"));
    assertEquals("127.0.0.2", own.config().getString("pekko.management.http.hostname"), "the contact point other nodes probe");
    RelayNode.Settings wildcard = load(Map.of("relay.host", "10.1.2.3", "relay.management-host", "0.0.0.0"));
    assertEquals("0.0.0.0", wildcard.config().getString("pekko.management.http.bind-hostname"));
    assertEquals("10.1.2.3", wildcard.config().getString("pekko.management.http.hostname"), "a wildcard is no contact point: the node's host is");
  }

  @Test
  void writesAreEnabledWithOn() {
    assertTrue(load(Map.of("relay.management-writes", "on")).node().managementWrites());
    assertFalse(load(Map.of("relay.management-writes", "off")).node().managementWrites());
  }

  @Test
  void withoutASecretTheManagementPortBindsLoopbackOnly() {
    String failure = loadFailure(Map.of("relay.secret", "", "relay.management-host", "0.0.0.0"));
    assertTrue(failure.startsWith("relay.management-host (RELAY_MANAGEMENT_HOST): without RELAY_SECRET"), failure);
    assertEquals("127.0.0.2", load(Map.of("relay.secret", "", "relay.management-host", "127.0.0.2")).node().managementHost());
  }

  @Test
  void badValuesStopTheNodeNamingTheKey() {
    assertTrue(loadFailure(Map.of("relay.management-writes", "sometimes")).startsWith("relay.management-writes (RELAY_MANAGEMENT_WRITES)"));
    assertTrue(loadFailure(Map.of("relay.management-host", " ")).startsWith("relay.management-host (RELAY_MANAGEMENT_HOST)"));
  }
}
