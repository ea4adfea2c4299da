package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A few seconds of the load generator against a real node JVM (started from this build's class
 * path, stopped by its pid): it must report traffic, and nothing lost or reordered. No timing is
 * asserted; the figures are printed only.
 */
class BenchSmokeTest {
  private static final String SECRET = "bench-smoke-secret-0123456789abcdef-0123456789";
  private static Process node;
  private static int accessPort;
  private static int managementPort;

  @TempDir static Path dir;

  @BeforeAll
  static void startNode() throws Exception {
    accessPort = freePort();
    int relayPort = freePort();
    managementPort = freePort();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"), "io.relay.node.RelayCli", "serve")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("node.log").toFile());
    Map<String, String> env = pb.environment();
    env.put("RELAY_SECRET", SECRET);
    env.put("RELAY_AUDIENCE", "http://127.0.0.1:" + accessPort);
    env.put("RELAY_PORT_ACCESS", Integer.toString(accessPort));
    env.put("RELAY_PORT_RELAY", Integer.toString(relayPort));
    env.put("RELAY_PORT_MANAGEMENT", Integer.toString(managementPort));
    env.put("RELAY_PORT_REMOTE", Integer.toString(freePort()));
    env.put("RELAY_URL", "ws://127.0.0.1:" + relayPort);
    env.put("RELAY_SEED_NODES", "");
    env.put("RELAY_DRAIN_DELAY", "100ms");
    node = pb.start();
    awaitReady(Duration.ofSeconds(60));
  }

  @AfterAll
  static void stopNode() throws InterruptedException {
    if (node != null) {
      node.destroy();
      if (!node.waitFor(40, TimeUnit.SECONDS)) {
        node.destroyForcibly();
      }
    }
  }

  @Test
  void aShortFanOutRunDeliversEverythingInOrder() throws Exception {
    JsonNode r = run("W1", "--topics", "3", "--duration", "2", "--warmup", "1");
    assertTrue(r.get("deliveredMsgPerS").asDouble() > 0, "delivered messages: " + r);
    assertTrue(r.get("p99Ms").asDouble() > 0, "latency measured: " + r);
    assertEquals(0, r.get("lostTotal").asLong(), "lost frames: " + r);
    assertEquals(0, r.get("reorderedTotal").asLong(), "reordered frames: " + r);
    assertEquals(0, r.get("closedConnections").asLong(), "connections closed: " + r);
    assertEquals(15, r.get("connections").asLong(), "3 topics of 1 writer and 4 readers");
  }

  @Test
  void theDefaultKeyIsTheNodesDevelopmentKey() {
    assertEquals(io.relay.http.HttpSettings.DEV_SECRET, BenchCommand.DEV_SECRET);
  }

  @Test
  void aShortChatRunDeliversBothWays() throws Exception {
    JsonNode r = run("W2", "--topics", "4", "--duration", "2", "--warmup", "1");
    assertTrue(r.get("deliveredMsgPerS").asDouble() > 0, "delivered messages: " + r);
    assertEquals(0, r.get("lostTotal").asLong(), "lost frames: " + r);
    assertEquals(0, r.get("reorderedTotal").asLong(), "reordered frames: " + r);
  }

  private JsonNode run(String workload, String... more) throws IOException {
    Path json = dir.resolve(workload + ".jsonl");
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "--target", "relay", "--workload", workload, "--loops", "1",
                "--access", "http://127.0.0.1:" + accessPort,
                "--secret", SECRET, "--audience", "http://127.0.0.1:" + accessPort,
                "--server-pid", Long.toString(node.pid()),
                "--json", json.toString()));
    args.addAll(List.of(more));
    int status = new CommandLine(new BenchCommand()).execute(args.toArray(String[]::new));
    assertEquals(0, status, "the generator's exit status");
    List<String> lines = Files.readAllLines(json);
    return new ObjectMapper().readTree(lines.get(lines.size() - 1));
  }

  private static void awaitReady(Duration timeout) {
    HttpClient http = HttpClient.newHttpClient();
    URI ready = URI.create("http://127.0.0.1:" + managementPort + "/ready");
    Await.until("the benchmark's node is ready (its log: " + dir.resolve("node.log") + ")", timeout, () -> {
      if (!node.isAlive()) {
        throw new AssertionError("the node exited with " + node.exitValue() + "; see " + dir.resolve("node.log"));
      }
      try {
        return http.send(HttpRequest.newBuilder(ready).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
      } catch (IOException notYet) {
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
    });
  }

  private static int freePort() {
    return io.relay.node.LoopbackPorts.free();
  }
}
