package io.relay.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.node.LoopbackPorts;
import io.relay.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The local cluster script as a newcomer uses it: up prints URLs and a working token, status
 * shows which node hosts a topic, scale and kill change the nodes, down leaves nothing running.
 */
class LocalClusterIT {
  private static final Duration COMMAND_DEADLINE = Duration.ofMinutes(3);
  private static final Pattern TOKEN = Pattern.compile("^(ey[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)$", Pattern.MULTILINE);
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private final Path script = Manifests.deployDir().resolve("local/relay-local").toAbsolutePath();
  private final Path work = Path.of(System.getProperty("relay.harness.work", "deploy/target/it")).toAbsolutePath();
  private final Path state = work.resolve("local-state-" + System.nanoTime());
  private final int base = freeBase();
  /** The processes the script started, as handles: a handle never signals a later process given the same pid. */
  private final Map<Long, ProcessHandle> started = new TreeMap<>();
  private int commands;

  /**
   * The node jar under a path of the test's own (a link to the build's), as relay-bench starts a
   * cluster from a copy: the script's default jar is not on the nodes' command lines.
   */
  private Path jar() throws IOException {
    Path link = state.resolveSibling(state.getFileName() + ".jar");
    if (!Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
      Files.createDirectories(work);
      Files.createSymbolicLink(link, Path.of(System.getProperty("relay.jar", "cluster-config/target/relay.jar")).toAbsolutePath());
    }
    return link;
  }

  @Test
  void upStatusScaleKillAndDownWorkAsDocumented() throws Exception {
    WebSocket socket = null;
    try {
      String up = run("up", "2");
      assertTrue(up.contains("node 1 ready") && up.contains("node 2 ready"), "up waits for both nodes: " + redact(up));
      assertTrue(up.contains("http://127.0.0.1:" + (base + 1)) && up.contains("ws://127.0.0.1:" + base), "up prints the URLs: " + redact(up));
      Matcher token = TOKEN.matcher(up);
      assertTrue(token.find(), "up prints a token");
      recordPids();
      assertEachLeadsItsSession();

      HttpResponse<String> code =
          HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + (base + 1) + "/session/demo"))
                  .header("Authorization", token.group(1))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, code.statusCode(), "the printed token is accepted by the access API through the proxy");
      String uri = code.body().replaceAll(".*\"uri\":\"([^\"]*)\".*", "$1");
      assertTrue(uri.startsWith("ws://127.0.0.1:" + base + "/session/demo?code="), "the one-time URI points at the proxy's relay port");
      socket = HTTP.newWebSocketBuilder().buildAsync(URI.create(uri), new WebSocket.Listener() {}).get(10, TimeUnit.SECONDS);

      Await.until("status lists topic demo on a node", Duration.ofSeconds(30), () -> {
        String status = run("status");
        return status.matches("(?s).*\\b1 demo pekko://relay@127\\.0\\.0\\.1:\\d+.*") && status.contains("ready=200");
      });

      String scaled = run("scale", "3");
      assertTrue(scaled.contains("node 3 ready") && scaled.contains("nodes: 1 2 3"), "scale 3 adds a ready third node: " + redact(scaled));
      recordPids();
      assertEachLeadsItsSession();
      String status = run("status");
      assertEquals(3, count(status, "ready=200"), "three ready nodes: " + redact(status));

      long third = Long.parseLong(Files.readString(state.resolve("node-3.pid")).trim());
      String shrunk = run("scale", "2");
      int reloaded = shrunk.indexOf("proxy reloaded with nodes: 1 2");
      int draining = shrunk.indexOf("draining node 3");
      assertTrue(
          reloaded >= 0 && reloaded < draining && shrunk.lastIndexOf("nodes: 1 2") > draining,
          "scale 2 takes node 3 out of the proxy, then drains it: " + redact(shrunk));
      assertFalse(ProcessHandle.of(third).map(ProcessHandle::isAlive).orElse(false), "node 3's process is gone");

      long second = Long.parseLong(Files.readString(state.resolve("node-2.pid")).trim());
      String killed = run("kill", "2");
      assertTrue(killed.contains("node 2 killed"), redact(killed));
      assertFalse(ProcessHandle.of(second).map(ProcessHandle::isAlive).orElse(false), "node 2's process is gone");

      // down is given the state directory alone, as a script that started the cluster from a jar
      // of its own calls it (relay-bench/run-admission): it finds the nodes by that directory
      String down = runWithoutJar("down");
      assertTrue(down.contains("stopped") && !down.contains("left alone"), redact(down));
      for (ProcessHandle process : started.values()) {
        assertFalse(process.isAlive(), "pid " + process.pid() + " is still running after down");
      }
    } finally {
      if (socket != null) {
        socket.abort();
      }
      recordPids(); // what runs now, if the test failed before it recorded them
      try {
        run("down");
      } catch (AssertionError e) {
        // already reported by the test body; the kill below is what matters now
      }
      started.values().forEach(ProcessHandle::destroyForcibly);
    }
  }

  /** Runs the script with the test's state directory and ports, without RELAY_JAR. */
  private String runWithoutJar(String... args) {
    return run(false, args);
  }

  /** Runs the script with the test's state directory, ports and a jar of its own; fails with its log on a non-zero exit. */
  private String run(String... args) {
    return run(true, args);
  }

  private String run(boolean withJar, String... args) {
    List<String> command = new ArrayList<>(List.of("bash", script.toString()));
    command.addAll(List.of(args));
    Path log = work.resolve("relay-local-" + (++commands) + "-" + args[0] + ".out");
    try {
      Files.createDirectories(work);
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      builder.environment().put("RELAY_LOCAL_STATE", state.toString());
      builder.environment().put("RELAY_LOCAL_BASE_PORT", String.valueOf(base));
      builder.environment().remove("RELAY_JAR");
      if (withJar) {
        builder.environment().put("RELAY_JAR", jar().toString());
      }
      Process process = builder.start();
      if (!process.waitFor(COMMAND_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("relay-local " + String.join(" ", args) + " did not finish within " + COMMAND_DEADLINE + "; see " + log);
      }
      String output = Files.readString(log);
      if (process.exitValue() != 0) {
        throw new AssertionError("relay-local " + String.join(" ", args) + " exited " + process.exitValue() + ": " + redact(output));
      }
      return output;
    } catch (IOException e) {
      throw new AssertionError("cannot run " + script, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void recordPids() throws IOException {
    if (!Files.isDirectory(state)) {
      return;
    }
    try (var files = Files.list(state)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".pid")).toList()) {
        long pid = Long.parseLong(Files.readString(file).trim());
        ProcessHandle.of(pid).ifPresent(process -> started.putIfAbsent(pid, process));
      }
    }
  }

  /**
   * Nodes and proxy run each in a session of its own, as services do: a scheduling group of its
   * own under the kernel's autogroup scheduling, out of reach of the shell's signals.
   */
  private void assertEachLeadsItsSession() throws IOException {
    for (long pid : started.keySet()) {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      // after "pid (comm) ": state, parent, process group, session
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      assertEquals(pid, Long.parseLong(fields[3]), "process " + pid + " leads a session of its own: " + stat);
    }
  }

  private static int count(String text, String needle) {
    return text.split(Pattern.quote(needle), -1).length - 1;
  }

  private static String redact(String output) {
    return TOKEN.matcher(output).replaceAll("<token>");
  }

  /** A base port whose proxy ports and node ports (four nodes: base + 10 * 4 + 3) are free. */
  private static int freeBase() {
    return LoopbackPorts.freeBlock(44);
  }
}
