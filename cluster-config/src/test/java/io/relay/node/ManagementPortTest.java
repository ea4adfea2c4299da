package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.management.UnixOperatingSystemMXBean;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The management port as operators, kubelet and Prometheus see it: health checks, metrics and
 * cluster reads answer without a credential; cluster writes (join, leave, down) are refused unless
 * enabled, and then need a relay:admin token; the port binds its own host.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ManagementPortTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** A node with the default settings: a read-only management port. */
  @AutoClose private final TestNode readOnly = TestNode.start();

  /** A cluster write through Pekko Management's cluster HTTP routes. */
  private record Write(String method, String path, String form) {}

  private static List<Write> writesOn(TestNode node) {
    String self = "/cluster/members/" + node.address();
    return List.of(
        new Write("PUT", self, "operation=Leave"),
        new Write("PUT", self, "operation=Down"),
        new Write("DELETE", self, ""),
        new Write("POST", "/cluster/members", "address=" + node.address()),
        new Write("PUT", "/cluster", "operation=prepare-for-full-shutdown"));
  }

  @Test
  void clusterWritesAreRefusedByDefaultEvenWithAnAdminTokenAndTheNodeStaysUp() {
    for (Write write : writesOn(readOnly)) {
      for (String authorization : Arrays.asList(null, Tokens.admin("relay:admin"))) {
        HttpResponse<String> response = readOnly.managementWrite(write.method(), write.path(), write.form(), authorization);
        String what = write + (authorization == null ? " without a token" : " with an admin token");
        JsonNode error = assertJsonError(403, response, what);
        assertTrue(
            error.get("message").asText().contains("RELAY_MANAGEMENT_WRITES=on"),
            what + ": the refusal says how to enable writes: " + error);
      }
    }
    assertEquals("Up", selfStatus(readOnly), "the node is still Up");
    assertEquals(200, readOnly.readyStatus(), "the node is still ready");
  }

  @Test
  void healthChecksMetricsAndClusterReadsAnswerWithoutCredentials() throws IOException {
    assertEquals(200, readOnly.managementGet("/ready").statusCode(), "/ready");
    assertEquals(200, readOnly.managementGet("/alive").statusCode(), "/alive");
    HttpResponse<String> metrics = readOnly.managementGet("/metrics");
    assertEquals(200, metrics.statusCode(), "/metrics");
    assertTrue(metrics.body().contains("relay_connections"), "/metrics is the Prometheus exposition");
    assertEquals(200, readOnly.managementGet("/cluster/members").statusCode(), "/cluster/members");
    HttpResponse<String> member = readOnly.managementGet("/cluster/members/" + readOnly.address());
    assertEquals(200, member.statusCode(), member.body());
    assertEquals("Up", JSON.readTree(member.body()).get("status").asText());
  }

  @Test
  void metricsIncludeTheJvmsHeapCollectionsAndFileDescriptorsAgainstTheirLimit() throws IOException {
    String exposition = readOnly.managementGet("/metrics").body();
    assertTrue(sample(exposition, "jvm_memory_used_bytes{area=\"heap\"}") > 0, "heap in use");
    assertTrue(sample(exposition, "jvm_memory_max_bytes{area=\"heap\"}") > 0, "the heap's limit");
    assertTrue(exposition.contains("# TYPE jvm_gc_collection_seconds summary"), "garbage collections");
    assertTrue(sample(exposition, "process_open_fds") > 0, "open file descriptors");
    long limit = ((UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getMaxFileDescriptorCount();
    assertEquals(limit, (long) sample(exposition, "process_max_fds"), "the file descriptor limit of the node's process");
    assertTrue(sample(exposition, "process_resident_memory_bytes") > 0, "resident memory");
  }

  /** The value of the sample written {@code series} (name and labels) in an exposition. */
  private static double sample(String exposition, String series) {
    return exposition
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1).trim().split(" ")[0]))
        .findFirst()
        .orElseThrow(() -> new AssertionError("/metrics has no sample " + series));
  }

  @Test
  void withWritesOnOnlyARelayAdminTokenLetsANodeLeave() throws Exception {
    TestNode node = TestNode.start(Map.of("relay.management-writes", "on"));
    try {
      String self = "/cluster/members/" + node.address();
      Instant now = Instant.now();
      String expired =
          Tokens.sign(
              Tokens.session(null, List.of("relay:admin"), null)
                  .issueTime(Date.from(now.minusSeconds(7200)))
                  .notBeforeTime(Date.from(now.minusSeconds(7200)))
                  .expirationTime(Date.from(now.minusSeconds(3600)))
                  .build());
      String otherSecret =
          Tokens.sign(Tokens.session(null, List.of("relay:admin"), null).build(), "another-secret-0123456789abcdef-0123456789");
      String unsigned = Tokens.unsigned(Tokens.session(null, List.of("relay:admin"), null).build());
      Map<String, String> unauthenticated =
          Map.of(
              "no token", "",
              "an expired admin token", expired,
              "an admin token signed with another secret", otherSecret,
              "an unsigned admin token", unsigned,
              "a malformed token", "Bearer not-a-jwt");
      for (Write write : writesOn(node)) {
        for (Map.Entry<String, String> token : unauthenticated.entrySet()) {
          String authorization = token.getValue().isEmpty() ? null : token.getValue();
          assertJsonError(401, node.managementWrite(write.method(), write.path(), write.form(), authorization), write + " with " + token.getKey());
        }
        assertJsonError(403, node.managementWrite(write.method(), write.path(), write.form(), Tokens.session("lab/topic", "read", "write")), write + " with a session token");
        assertJsonError(403, node.managementWrite(write.method(), write.path(), write.form(), Tokens.admin("relay:stats")), write + " with a stats token");
      }
      assertEquals("Up", selfStatus(node), "no refused write changed the cluster");

      HttpResponse<String> left = node.managementWrite("PUT", self, "operation=Leave", "Bearer " + Tokens.admin("relay:admin"));
      assertEquals(200, left.statusCode(), left.body());
      Await.until("the node that was asked to leave turns unready", Duration.ofSeconds(10), () -> node.readyStatus() != 200);
      node.system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      node.close();
    }
  }

  @Test
  void theManagementPortBindsTheManagementHostAndByDefaultTheNodesHost() throws IOException {
    assertEquals(200, status("127.0.0.1", readOnly.managementPort), "by default the management port binds relay.host");
    assertThrows(IOException.class, () -> status("127.0.0.2", readOnly.managementPort), "and nothing else");
    try (TestNode node = TestNode.start(Map.of("relay.management-host", "127.0.0.2"))) {
      assertEquals(200, status("127.0.0.2", node.managementPort), "the management port binds relay.management-host");
      assertThrows(IOException.class, () -> status("127.0.0.1", node.managementPort), "and not relay.host");
      String uri = new AccessClient(node).relayUri("lab/hosts", Tokens.session("lab/hosts", "read"));
      assertTrue(uri.startsWith("ws://127.0.0.1:"), "the access API still binds relay.host: " + uri);
    }
  }

  private static int status(String host, int port) throws IOException {
    try {
      return HttpClient.newBuilder()
          .connectTimeout(Duration.ofSeconds(5))
          .build()
          .send(HttpRequest.newBuilder(URI.create("http://" + host + ":" + port + "/ready")).build(), HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** This node's status in its own {@code /cluster/members}. */
  private static String selfStatus(TestNode node) {
    try {
      for (JsonNode member : JSON.readTree(node.managementGet("/cluster/members").body()).get("members")) {
        if (member.get("node").asText().equals(node.address())) {
          return member.get("status").asText();
        }
      }
      return "absent";
    } catch (IOException e) {
      throw new AssertionError("cannot read /cluster/members", e);
    }
  }

  private static JsonNode assertJsonError(int status, HttpResponse<String> response, String what) {
    assertEquals(status, response.statusCode(), what + ": " + response.body());
    try {
      JsonNode body = JSON.readTree(response.body());
      assertEquals(status, body.path("code").asInt(), what + ": the JSON error carries the status: " + response.body());
      assertTrue(body.path("message").isTextual(), what + ": the JSON error carries a message: " + response.body());
      return body;
    } catch (IOException e) {
      throw new AssertionError(what + ": the refusal is not JSON: " + response.body(), e);
    }
  }
}
