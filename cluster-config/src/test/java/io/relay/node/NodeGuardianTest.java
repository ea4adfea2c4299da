package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the node's guardian sets up when a node starts with no seed nodes and no discovery: a
 * cluster of its own, the services under their names, the three ports answering, and the node's
 * gauges and the delay of its event loops on {@code /metrics}. The drain it registers is {@code JoinAndDrainTest}'s.
 */
class NodeGuardianTest {
  private static TestNode node;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeAll
  static void start() {
    node = TestNode.start();
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void aNodeWithoutSeedsFormsAClusterOfItsOwn() {
    Cluster cluster = Cluster.get(node.system);
    assertEquals(MemberStatus.up(), cluster.selfMember().status(), "the node joined itself and is up");
    assertEquals(node.address(), cluster.selfMember().address().toString());
    assertEquals(1, node.memberCount());
  }

  @Test
  void theServicesRunUnderTheirNames() throws Exception {
    for (String name : List.of("codes", "code-sweep", "topics", "deny-list", "cluster-status", "leave-watcher", "claims-channel", "cancels-channel")) {
      ActorRef actor =
          node.system.classicSystem().actorSelection("/user/" + name).resolveOne(Duration.ofSeconds(5)).toCompletableFuture().get();
      assertNotNull(actor, name);
    }
  }

  @Test
  void aNodeWhoseCodeStoreStopsStopsToBeStartedAgain() throws Exception {
    try (TestNode failing = TestNode.start()) {
      ActorRef codes = failing.system.classicSystem().actorSelection("/user/codes").resolveOne(Duration.ofSeconds(5)).toCompletableFuture().get();
      codes.tell(org.apache.pekko.actor.PoisonPill.getInstance(), ActorRef.noSender()); // as a fault would stop it
      Await.value("the node stops once its code store has", Duration.ofSeconds(30), failing.system.getWhenTerminated().toCompletableFuture());
      assertEquals(
          java.util.Optional.of(NodeGuardian.ServiceStopped.INSTANCE),
          org.apache.pekko.actor.CoordinatedShutdown.get(failing.system).getShutdownReason(),
          "stopped for that reason");
      assertEquals(1, failing.system.settings().config().getInt("pekko.coordinated-shutdown.reason-overrides.\"io.relay.node.NodeGuardian$ServiceStopped\".exit-code"),
          "which exits with status 1, so that systemd's Restart=on-failure and Kubernetes start it again");
    }
  }

  @Test
  void theAccessRelayAndManagementPortsAnswer() throws Exception {
    HttpResponse<String> code =
        http.send(HttpRequest.newBuilder(node.access("/session/demo")).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(401, code.statusCode(), "the access API refuses a code request without a token: " + code.body());
    assertTrue(code.body().contains("\"code\":401"), code.body());

    HttpResponse<String> relay =
        http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.relayPort + "/elsewhere")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(404, relay.statusCode(), "the relay port serves /session/{topic} only");

    assertEquals(200, node.readyStatus(), "the management port says the node is ready");
  }

  @Test
  void theNodesGaugesAreOnMetrics() {
    for (String gauge :
        List.of(
            "relay_connections", "relay_topics", "relay_deny_list_entries", "relay_deny_list_read", "relay_cluster_members",
            "relay_memory_budget_bytes", "relay_memory_held_bytes", "relay_jvm_heap_used_bytes", "relay_codes_replicated",
            "relay_code_shard_largest", "relay_code_horizon_ahead_seconds")) {
      assertTrue(node.metric(gauge) >= 0, gauge + " is exposed");
    }
    assertEquals(1.0, node.metric("relay_cluster_members"), "this node alone");
    assertEquals(1.0, node.metric("relay_deny_list_read"), "a node alone has read the deny list");
    Await.until("the client ports' event loops are probed", Duration.ofSeconds(10), () -> node.metric("relay_event_loop_delay_seconds_count") > 0);
  }
}
