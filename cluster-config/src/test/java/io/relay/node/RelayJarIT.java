package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.ClusterPki;
import io.relay.testing.TestCertificate;
import io.relay.testing.Tokens;
import java.io.IOException;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The packaged jar, run as a user runs it: {@code java -jar relay.jar} with RELAY_SECRET and its
 * cluster certificate (RELAY_CLUSTER_TLS_DIR) only.
 */
class RelayJarIT {
  private static final Path JAR = Path.of("target", "relay.jar");
  /** Node logs stay here for the suite's log hygiene check. */
  private static final Path LOGS = Path.of("target", "relay-logs");
  private static final String SECRET = "jar-test-secret-0123456789abcdef-0123456789";
  private static Path clusterTls;
  private final List<Process> started = new ArrayList<>();

  @BeforeAll
  static void makeClusterCertificate(@TempDir Path dir) throws Exception {
    clusterTls = ClusterPki.create(dir.resolve("ca"), "jar-test-ca").issue(dir.resolve("cluster-tls"), ClusterPki.CLUSTER_NAME);
  }
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stopEverythingStarted() throws InterruptedException {
    for (Process process : started) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static Path log(String name) throws IOException {
    Files.createDirectories(LOGS);
    return Files.createTempFile(LOGS, name, ".log");
  }

  /**
   * Runs the jar with {@code env} as its only RELAY_* settings; a node (no {@code args}) with a
   * secret also gets the cluster certificate, unless {@code env} chooses its cluster links itself.
   */
  private Process run(Map<String, String> env, Path log, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(javaBinary(), "-jar", JAR.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(k -> k.startsWith("RELAY_"));
    if (args.length == 0 && env.containsKey("RELAY_SECRET") && env.keySet().stream().noneMatch(k -> k.startsWith("RELAY_CLUSTER_"))) {
      builder.environment().put("RELAY_CLUSTER_TLS_DIR", clusterTls.toString());
    }
    builder.environment().putAll(env);
    Process process = builder.start();
    started.add(process);
    return process;
  }

  private static String javaBinary() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  @Test
  void servesAClientWithinSecondsWithTheSecretAndTheClusterCertificateSet() throws Exception {
    for (int port : new int[] {3000, 3001, 8558, 25520}) {
      try (java.net.ServerSocket probe = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
        probe.setReuseAddress(true);
      } catch (IOException inUse) {
        throw new AssertionError("port " + port + " is in use: this test runs the jar on its default ports; stop what holds it", inUse);
      }
    }
    Path log = log("relay-node");
    Process node = run(Map.of("RELAY_SECRET", SECRET), log);
    Path tokenOut = Files.createTempFile("relay-token", ".out");
    tokenOut.toFile().deleteOnExit();
    String token = mint(tokenOut, "--topic", "demo", "--booking-id", "b1");

    String[] uri = new String[1];
    Await.until(
        "the access API of the jar answers with a relay URI (log: " + log + ")",
        Duration.ofSeconds(30),
        () -> (uri[0] = postSession(token)) != null);
    String version = System.getProperty("relay.version");
    assertTrue(contains(log, "relay " + version + " starting"), "the log's start line names the build " + version);
    String metrics =
        HttpClient.newHttpClient()
            .send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:8558/metrics")).build(), HttpResponse.BodyHandlers.ofString())
            .body();
    assertTrue(metrics.contains("relay_build_info{version=\"" + version + "\"} 1"), "relay_build_info names the build " + version);
    String statsToken = mint(tokenOut, "--scopes", "relay:stats");
    String cluster =
        http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:3000/cluster")).header("Authorization", statsToken).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    assertTrue(cluster.contains("\"build\":\"" + version + "\""), "the cluster page's data names the answering node's build " + version + ": " + cluster);
    String pending = postSession(token);
    String code = pending.replaceAll(".*code=", "");
    for (int port : new int[] {3000, 3001}) {
      for (String request : LogSecrecyTest.malformed(code, token)) {
        RawHttp.exchange(port, null, request);
      }
    }
    Await.until("the malformed requests are logged (log: " + log + ")", Duration.ofSeconds(10), () -> contains(log, LogSecrecyTest.REFUSED));
    try (Participant a = Participant.connect(uri[0]);
        Participant b = Participant.connect(pending)) {
      a.sendText("through the jar");
      assertEquals("through the jar", b.next().asText());

      node.toHandle().destroy(); // SIGTERM
      assertEquals(1001, b.awaitClose(Duration.ofSeconds(15)), "a draining node closes with 1001");
      assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the node exits within 30 s of SIGTERM");
    }
    String output = Files.readString(log, StandardCharsets.ISO_8859_1);
    assertTrue(!output.contains(token.split("\\.")[1]) && !output.contains(token.split("\\.")[2]), "the log never holds the token");
    assertTrue(!output.contains(code) && !output.contains("code="), "the log never holds a code or a query string");
  }

  @Test
  void reportsItsVersion() throws Exception {
    Path out = log("relay-version");
    Process version = run(Map.of(), out, "--version");
    assertTrue(version.waitFor(30, TimeUnit.SECONDS), "relay --version did not finish");
    assertEquals("relay " + System.getProperty("relay.version"), Files.readString(out).strip());
  }

  /**
   * A node asked to leave exits with status 0; a downed node with Pekko's status for downing, 255
   * (-1), so that a supervisor sees it did not stop of its own accord.
   */
  @ParameterizedTest
  @CsvSource({"Leave, 0", "Down, 255"})
  void exitsWithinThirtySecondsOfALeaveOrADownThroughTheManagementPort(String operation, int status) throws Exception {
    Path log = log("relay-" + operation.toLowerCase(java.util.Locale.ROOT));
    int management = TestNode.freePort();
    int remote = TestNode.freePort();
    int relay = TestNode.freePort();
    Process node =
        run(
            Map.of(
                "RELAY_SECRET", SECRET,
                "RELAY_AUDIENCE", TestNode.AUDIENCE,
                "RELAY_MANAGEMENT_WRITES", "on",
                "RELAY_DRAIN_DELAY", "1s",
                "RELAY_PORT_ACCESS", String.valueOf(TestNode.freePort()),
                "RELAY_PORT_RELAY", String.valueOf(relay),
                "RELAY_PORT_MANAGEMENT", String.valueOf(management),
                "RELAY_PORT_REMOTE", String.valueOf(remote),
                "RELAY_URL", "ws://127.0.0.1:" + relay),
            log);
    URI self = URI.create("http://127.0.0.1:" + management + "/cluster/members/pekko://relay@127.0.0.1:" + remote);
    Await.until("the jar's /ready answers 200 (log: " + log + ")", Duration.ofSeconds(30), () -> ready(management));
    String admin = Tokens.sign(Tokens.session(null, List.of("relay:admin"), null).build(), SECRET);
    HttpResponse<String> asked =
        http.send(
            HttpRequest.newBuilder(self)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .header("Authorization", "Bearer " + admin)
                .PUT(HttpRequest.BodyPublishers.ofString("operation=" + operation))
                .timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, asked.statusCode(), asked.body());
    assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the node exits within 30 s of a " + operation + " (log: " + log + ")");
    assertEquals(status, node.exitValue(), "the exit status after a " + operation + " (log: " + log + ")");
    String output = Files.readString(log);
    assertTrue(output.contains("draining: closing"), "the drain ran and its lines were written before the exit: " + log);
    assertTrue(output.contains("Shutting down"), "the cluster's shutdown lines were written before the exit: " + log);
    assertTrue(!output.contains(admin), "the log never holds the token");
  }

  private boolean ready(int managementPort) {
    try {
      return http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/ready")).timeout(Duration.ofSeconds(10)).build(),
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

  /** A token from the jar's {@code relay token} with {@code args}, its output written to {@code out}. */
  private String mint(Path out, String... args) throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of("token"));
    command.addAll(List.of(args));
    Process mint = run(Map.of("RELAY_SECRET", SECRET), out, command.toArray(String[]::new));
    assertTrue(mint.waitFor(30, TimeUnit.SECONDS), "relay " + command + " did not finish");
    assertEquals(0, mint.exitValue(), Files.readString(out));
    return Files.readAllLines(out).stream().filter(l -> l.startsWith("ey")).findFirst().orElseThrow();
  }

  @Test
  void badConfigurationStopsTheNodeWithOneLineNamingTheKey() throws Exception {
    Path log = log("relay-bad");
    Process node = run(Map.of("RELAY_SECRET", SECRET, "RELAY_BUFFER_SIZE", "lots"), log);
    assertTrue(node.waitFor(30, TimeUnit.SECONDS), "a badly configured node did not stop");
    assertEquals(2, node.exitValue());
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    assertEquals(1, lines.size(), "exactly one line: " + lines);
    assertTrue(lines.get(0).contains("relay.buffer-size (RELAY_BUFFER_SIZE)"), lines.get(0));
  }

  @ParameterizedTest
  @CsvSource({
    "RELAY_PORT_ACCESS, cannot bind access API",
    "RELAY_PORT_MANAGEMENT, cannot bind the management port",
    "RELAY_PORT_REMOTE, cannot bind the cluster port"
  })
  void aPortTakenByAnotherProcessStopsTheNodeWithStatus2(String setting, String why) throws Exception {
    Path log = log("relay-port-taken");
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0)) {
      Map<String, String> env = new java.util.HashMap<>(Map.of("RELAY_SECRET", SECRET));
      for (String port : List.of("RELAY_PORT_ACCESS", "RELAY_PORT_RELAY", "RELAY_PORT_MANAGEMENT", "RELAY_PORT_REMOTE")) {
        env.put(port, String.valueOf(port.equals(setting) ? taken.getLocalPort() : TestNode.freePort()));
      }
      Process node = run(env, log);
      assertTrue(node.waitFor(30, TimeUnit.SECONDS), "a node whose " + setting + " is taken did not stop (log: " + log + ")");
      assertEquals(2, node.exitValue(), "a port the node cannot bind is bad configuration (log: " + log + ")");
      assertTrue(Files.readString(log).contains(why), "the line saying why (log: " + log + ")");
    }
  }

  @Test
  void aNodeWithASecretAndNoChoiceOfClusterLinksStopsWithOneLineSayingWhatToSet() throws Exception {
    Path log = log("relay-no-links");
    Process node = run(Map.of("RELAY_SECRET", SECRET, "RELAY_CLUSTER_TLS_DIR", ""), log);
    assertTrue(node.waitFor(30, TimeUnit.SECONDS), "a node without cluster TLS files or plain TCP chosen did not stop");
    assertEquals(2, node.exitValue());
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    assertEquals(1, lines.size(), "exactly one line: " + lines);
    assertTrue(
        lines.get(0).contains("relay.cluster-tls-dir (RELAY_CLUSTER_TLS_DIR): cluster links need TLS")
            && lines.get(0).contains("RELAY_CLUSTER_TRANSPORT=tcp"),
        lines.get(0));
  }

  @Test
  void logsOneJsonObjectPerLineWhenAsked() throws Exception {
    Path log = log("relay-json");
    int access = TestNode.freePort();
    int relay = TestNode.freePort();
    run(
        Map.of(
            "RELAY_SECRET", SECRET,
            "RELAY_LOG_FORMAT", "json",
            "RELAY_PORT_ACCESS", String.valueOf(access),
            "RELAY_PORT_RELAY", String.valueOf(relay),
            "RELAY_PORT_MANAGEMENT", String.valueOf(TestNode.freePort()),
            "RELAY_PORT_REMOTE", String.valueOf(TestNode.freePort()),
            "RELAY_URL", "ws://127.0.0.1:" + relay),
        log);
    String token = Tokens.sign(Tokens.session("demo", java.util.List.of("read", "write"), "booking-json").audience("http://127.0.0.1:3000").build(), SECRET);
    String[] uri = new String[1];
    Await.until("the access API answers with a relay URI (log: " + log + ")", Duration.ofSeconds(30), () -> (uri[0] = postSession(access, token)) != null);
    try (Participant p = Participant.connect(uri[0])) {
      Await.until("the connection's opening is logged", Duration.ofSeconds(10), () -> contains(log, "connection opened"));
    }
    Await.until("the connection's closing is logged", Duration.ofSeconds(10), () -> contains(log, "connection closed"));
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    boolean sawClose = false;
    for (String line : Files.readAllLines(log)) {
      com.fasterxml.jackson.databind.JsonNode entry = json.readTree(line);
      assertTrue(entry.has("level") && entry.has("formattedMessage"), "a log entry: " + line);
      if (entry.get("formattedMessage").asText().equals("connection closed")) {
        sawClose = true;
        String fields = entry.get("kvpList").toString();
        for (String key : java.util.List.of("topic", "booking", "scopes", "node", "remote", "duration_s", "reason")) {
          assertTrue(fields.contains("\"" + key + "\""), "the close line carries " + key + ": " + line);
        }
      }
    }
    assertTrue(sawClose, "a connection closed line was logged");
  }

  @Test
  void withTlsEveryLineIsJsonFromTheFirst(@TempDir Path dir) throws Exception {
    Path log = log("relay-json-tls");
    TestCertificate certificate = TestCertificate.create(dir);
    Process node =
        run(
            Map.of(
                "RELAY_SECRET", SECRET,
                "RELAY_LOG_FORMAT", "json",
                "RELAY_TLS_CERT", certificate.cert().toString(),
                "RELAY_TLS_KEY", certificate.key().toString(),
                "RELAY_PORT_ACCESS", String.valueOf(TestNode.freePort()),
                "RELAY_PORT_RELAY", String.valueOf(TestNode.freePort()),
                "RELAY_PORT_MANAGEMENT", String.valueOf(TestNode.freePort()),
                "RELAY_PORT_REMOTE", String.valueOf(TestNode.freePort())),
            log);
    Await.until("the node logs its start (log: " + log + ")", Duration.ofSeconds(30), () -> !node.isAlive() || contains(log, "starting"));
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    List<String> lines = Files.readAllLines(log);
    assertTrue(lines.stream().anyMatch(line -> line.contains("TLS on")), "the TLS line is logged: " + lines);
    for (String line : lines) {
      assertTrue(json.readTree(line).has("formattedMessage"), "a JSON log entry: " + line);
    }
  }

  private static boolean contains(Path log, String text) {
    try {
      return Files.readString(log).contains(text);
    } catch (IOException e) {
      return false;
    }
  }

  private String postSession(String token) {
    return postSession(3000, token);
  }

  private String postSession(int accessPort, String token) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + accessPort + "/session/demo"))
                  .header("Authorization", token)
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200 ? response.body().replaceAll(".*\"uri\":\"([^\"]+)\".*", "$1") : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
