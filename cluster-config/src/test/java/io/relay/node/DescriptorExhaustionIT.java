package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar under a low file descriptor limit ({@code ulimit -n 1024}) and 1,100 idle
 * connections that never send a request: the node stops accepting at its connection limit (or,
 * when told to accept more than its descriptors allow, backs off from failing accepts without
 * flooding its log), closes the idle connections at the header timeout, and answers a client
 * that comes after them.
 */
class DescriptorExhaustionIT {
  private static final Path JAR = Path.of("target", "relay.jar");
  private static final Path LOGS = Path.of("target", "relay-logs");
  private static final String SECRET = "fd-test-secret-0123456789abcdef-0123456789";
  private static final int IDLE_CONNECTIONS = 1_100;

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<Socket> idle = new ArrayList<>();
  private Process node;

  @AfterEach
  void stop() throws Exception {
    for (Socket socket : idle) {
      socket.close();
    }
    if (node != null) {
      node.destroyForcibly();
      node.waitFor(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void atTheConnectionLimitTheNodeStopsAcceptingAndServesAClientAfterTheIdleOnesTimeOut() throws Exception {
    Ports ports = Ports.free();
    Path log = start(ports, Map.of());
    openIdleConnections(ports.relay);
    assertAnswersAClient(ports, log);
    assertTrue(metric(ports, "relay_connection_limit_reached_total") > 0, "the limit was reached");
    assertTrue(metric(ports, "relay_header_timeouts_total") > 0, "idle connections were closed at the header timeout");
    assertTrue(metric(ports, "relay_max_connections") < 1024, "max-connections follows the descriptor limit");
    assertQuietLog(log);
  }

  @Test
  void whenAcceptsFailForWantOfDescriptorsTheNodeBacksOffAndLogsACount() throws Exception {
    Ports ports = Ports.free();
    Path log = start(ports, Map.of("RELAY_MAX_CONNECTIONS", "100000"));
    openIdleConnections(ports.relay);
    assertAnswersAClient(ports, log);
    assertTrue(metric(ports, "relay_accept_failures_total") > 0, "accepts failed (EMFILE)");
    long failureLines = Files.readAllLines(log).stream().filter(l -> l.contains("accepting connections on port")).count();
    assertTrue(failureLines >= 1 && failureLines <= 4, "one line per 10 s about failing accepts, saw " + failureLines);
    assertQuietLog(log);
  }

  private record Ports(int access, int relay, int management, int remote) {
    static Ports free() {
      return new Ports(TestNode.freePort(), TestNode.freePort(), TestNode.freePort(), TestNode.freePort());
    }
  }

  private Path start(Ports ports, Map<String, String> extra) throws IOException {
    Files.createDirectories(LOGS);
    Path log = Files.createTempFile(LOGS, "relay-fd", ".log");
    ProcessBuilder builder =
        new ProcessBuilder("bash", "-c", "ulimit -n 1024 && exec \"$0\" -jar \"$1\"", javaBinary(), JAR.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(k -> k.startsWith("RELAY_"));
    env.putAll(
        Map.of(
            "RELAY_SECRET", SECRET,
            "RELAY_PORT_ACCESS", String.valueOf(ports.access),
            "RELAY_PORT_RELAY", String.valueOf(ports.relay),
            "RELAY_PORT_MANAGEMENT", String.valueOf(ports.management),
            "RELAY_PORT_REMOTE", String.valueOf(ports.remote),
            "RELAY_URL", "ws://127.0.0.1:" + ports.relay,
            "RELAY_HEADER_TIMEOUT", "3s"));
    env.putAll(extra);
    node = builder.start();
    Waits.await("the node is ready (log: " + log + ")", Duration.ofSeconds(60), () -> ready(ports));
    return log;
  }

  /** Connects and sends nothing; connections the node does not accept wait in its backlog. */
  private void openIdleConnections(int port) throws IOException {
    for (int i = 0; i < IDLE_CONNECTIONS; i++) {
      Socket socket = new Socket();
      socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      idle.add(socket);
    }
  }

  private void assertAnswersAClient(Ports ports, Path log) {
    String token =
        Tokens.sign(Tokens.session("fd/demo", List.of("read", "write"), "b-fd").audience("http://127.0.0.1:3000").build(), SECRET);
    Waits.await(
        "a client after the idle connections gets a relay URI (log: " + log + ")",
        Duration.ofSeconds(60),
        () -> postSession(ports.access, token) == 200);
  }

  private static void assertQuietLog(Path log) throws IOException {
    long size = Files.size(log);
    assertTrue(size < 256 * 1024, "the log stays small under the attack: " + size + " bytes (" + log + ")");
  }

  private int postSession(int accessPort, String token) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + accessPort + "/session/fd/demo"))
                  .header("Authorization", token)
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private boolean ready(Ports ports) {
    try {
      return http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports.management + "/ready")).timeout(Duration.ofSeconds(5)).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private double metric(Ports ports, String sample) throws Exception {
    String body =
        http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ports.management + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    for (String line : body.split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    throw new AssertionError("no sample " + sample + " in /metrics");
  }

  private static String javaBinary() {
    return ProcessHandle.current().info().command().orElse("java");
  }
}
