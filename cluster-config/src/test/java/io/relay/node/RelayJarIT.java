package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.api.Test;

/** The packaged jar, run as a user runs it: {@code java -jar relay.jar} with RELAY_SECRET only. */
class RelayJarIT {
  private static final Path JAR = Path.of("target", "relay.jar");
  private static final String SECRET = "jar-test-secret-0123456789abcdef-0123456789";
  private final List<Process> started = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stopEverythingStarted() throws InterruptedException {
    for (Process process : started) {
      process.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private Process run(Map<String, String> env, Path log, String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(javaBinary(), "-jar", JAR.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(k -> k.startsWith("RELAY_"));
    builder.environment().putAll(env);
    Process process = builder.start();
    started.add(process);
    return process;
  }

  private static String javaBinary() {
    return ProcessHandle.current().info().command().orElse("java");
  }

  @Test
  void servesAClientWithinSecondsWithOnlyTheSecretSet() throws Exception {
    Path log = Files.createTempFile("relay-node", ".log");
    Process node = run(Map.of("RELAY_SECRET", SECRET), log);
    Path tokenOut = Files.createTempFile("relay-token", ".out");
    Process mint = run(Map.of("RELAY_SECRET", SECRET), tokenOut, "token", "--topic", "demo", "--booking-id", "b1");
    assertTrue(mint.waitFor(30, TimeUnit.SECONDS), "relay token did not finish");
    assertEquals(0, mint.exitValue(), Files.readString(tokenOut));
    String token = Files.readAllLines(tokenOut).stream().filter(l -> l.startsWith("ey")).findFirst().orElseThrow();

    long started = System.nanoTime();
    String[] uri = new String[1];
    Waits.await(
        "the access API of the jar answers with a relay URI (log: " + log + ")",
        Duration.ofSeconds(30),
        () -> (uri[0] = postSession(token)) != null);
    System.out.printf("relay.jar served its first code %.1f s after start%n", (System.nanoTime() - started) / 1e9);
    try (Participant a = Participant.connect(uri[0]);
        Participant b = Participant.connect(postSession(token))) {
      a.sendText("through the jar");
      assertEquals("through the jar", b.next().asText());

      node.toHandle().destroy(); // SIGTERM
      assertEquals(1001, b.awaitClose(Duration.ofSeconds(15)), "a draining node closes with 1001");
      assertTrue(node.waitFor(30, TimeUnit.SECONDS), "the node exits within 30 s of SIGTERM");
    }
    String output = Files.readString(log);
    assertTrue(!output.contains(token), "the log never holds the token");
    assertTrue(!output.contains("code="), "the log never holds a code");
  }

  @Test
  void badConfigurationStopsTheNodeWithOneLineNamingTheKey() throws Exception {
    Path log = Files.createTempFile("relay-bad", ".log");
    Process node = run(Map.of("RELAY_SECRET", SECRET, "RELAY_BUFFER_SIZE", "lots"), log);
    assertTrue(node.waitFor(30, TimeUnit.SECONDS), "a badly configured node did not stop");
    assertEquals(2, node.exitValue());
    List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
    assertEquals(1, lines.size(), "exactly one line: " + lines);
    assertTrue(lines.get(0).contains("relay.buffer-size (RELAY_BUFFER_SIZE)"), lines.get(0));
  }

  private String postSession(String token) {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:3000/session/demo"))
                  .header("Authorization", token)
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
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
