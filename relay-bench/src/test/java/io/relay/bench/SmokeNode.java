package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.memory.BufferChecks;
import io.relay.node.LoopbackPorts;
import io.relay.testing.Await;
import io.relay.testing.TestCertificate;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;

/**
 * A real node JVM for the generator's smoke tests, started from this build's class path and
 * stopped by its pid; with a certificate it serves https and wss.
 */
final class SmokeNode implements AutoCloseable {
  private static final String SECRET = "bench-smoke-secret-0123456789abcdef-0123456789";
  private final Path dir;
  private final Path cert;
  private final int accessPort = LoopbackPorts.free();
  private final int managementPort = LoopbackPorts.free();
  private final Process process;
  /** Kills the node if the test JVM stops before {@link #close}. */
  private final Thread hook;

  /** @param certificate the certificate to serve, or null for ws */
  SmokeNode(Path dir, TestCertificate certificate) throws IOException {
    this.dir = dir;
    this.cert = certificate == null ? null : certificate.cert();
    int relayPort = LoopbackPorts.free();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
                java, "-Xms256m", "-Xmx256m", "-D" + BufferChecks.PROPERTY + "=" + BufferChecks.ON,
                "-cp", System.getProperty("java.class.path"), "io.relay.node.RelayCli", "serve")
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("node.log").toFile());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(key -> key.startsWith("RELAY_"));
    env.put("RELAY_SECRET", SECRET);
    env.put("RELAY_AUDIENCE", "http://127.0.0.1:" + accessPort);
    env.put("RELAY_PORT_ACCESS", Integer.toString(accessPort));
    env.put("RELAY_PORT_RELAY", Integer.toString(relayPort));
    env.put("RELAY_PORT_MANAGEMENT", Integer.toString(managementPort));
    env.put("RELAY_PORT_REMOTE", Integer.toString(LoopbackPorts.free()));
    env.put("RELAY_URL", (cert == null ? "ws" : "wss") + "://127.0.0.1:" + relayPort);
    env.put("RELAY_SEED_NODES", "");
    env.put("RELAY_CLUSTER_TRANSPORT", "tcp"); // a single node: no cluster links to protect
    env.put("RELAY_DRAIN_DELAY", "100ms");
    // W5 waits for its warm-up's access codes to expire: seconds here, not the default half minute
    env.put("RELAY_CODE_TTL", "5s");
    env.put("RELAY_CODE_SWEEP_INTERVAL", "1s");
    if (cert != null) {
      env.put("RELAY_TLS_CERT", certificate.cert().toString());
      env.put("RELAY_TLS_KEY", certificate.key().toString());
    }
    process = pb.start();
    hook = new Thread(process::destroyForcibly, "kill-smoke-node-" + process.pid());
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      awaitReady(Duration.ofSeconds(60));
    } catch (RuntimeException | Error e) {
      process.destroyForcibly(); // the test never gets a node to close: this one is stopped here
      throw e;
    }
  }

  /** Runs the generator against this node; returns its JSON result. */
  JsonNode bench(String workload, String... more) throws IOException {
    Path json = dir.resolve(workload + ".jsonl");
    List<String> args =
        new ArrayList<>(
            List.of(
                "--target", "relay", "--workload", workload, "--loops", "1",
                "--access", (cert == null ? "http" : "https") + "://127.0.0.1:" + accessPort,
                "--secret", SECRET, "--audience", "http://127.0.0.1:" + accessPort,
                "--server-pid", Long.toString(process.pid()),
                "--json", json.toString()));
    if (cert != null) {
      args.addAll(List.of("--tls-ca", cert.toString()));
    }
    args.addAll(List.of(more));
    int status = new CommandLine(new BenchCommand()).execute(args.toArray(String[]::new));
    assertEquals(0, status, "the generator's exit status");
    List<String> lines = Files.readAllLines(json);
    return new ObjectMapper().readTree(lines.get(lines.size() - 1));
  }

  /** The options that point a generator at this node's access API (http), with its key and audience. */
  List<String> accessOptions() {
    return List.of("--access", "http://127.0.0.1:" + accessPort, "--secret", SECRET, "--audience", "http://127.0.0.1:" + accessPort);
  }

  /** The node's Prometheus metrics, on its management port. */
  String metricsUrl() {
    return "http://127.0.0.1:" + managementPort + "/metrics";
  }

  /** The node JVM's process id. */
  long pid() {
    return process.pid();
  }

  /** Every result the generator has reported for {@code workload} on this node, in order. */
  List<JsonNode> results(String workload) throws IOException {
    ObjectMapper json = new ObjectMapper();
    List<JsonNode> results = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve(workload + ".jsonl"))) {
      results.add(json.readTree(line));
    }
    return results;
  }

  private void awaitReady(Duration timeout) {
    HttpClient http = HttpClient.newHttpClient();
    URI ready = URI.create("http://127.0.0.1:" + managementPort + "/ready");
    Await.until("the benchmark's node is ready (its log: " + dir.resolve("node.log") + ")", timeout, () -> {
      if (!process.isAlive()) {
        throw new AssertionError("the node exited with " + process.exitValue() + "; see " + dir.resolve("node.log"));
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

  /** Stops the node (by its pid); fails if it logged a fault in its accounting of relayed bytes. */
  @Override
  public void close() throws InterruptedException {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
    process.destroy();
    if (!process.waitFor(40, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
    try {
      if (Files.readString(dir.resolve("node.log"), StandardCharsets.ISO_8859_1).contains("buffer accounting fault")) {
        throw new AssertionError("the node logged a buffer accounting fault; see " + dir.resolve("node.log"));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the node's log", e);
    }
  }

}
