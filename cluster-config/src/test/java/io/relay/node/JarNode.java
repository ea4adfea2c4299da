package io.relay.node;

import io.relay.memory.BufferChecks;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged relay.jar as one node process on free loopback ports, for the attack suite: started
 * with the JVM options, settings and file descriptor limit an attack needs, asked for codes,
 * readiness and metrics as a client and Prometheus would, and stopped by pid when closed.
 */
final class JarNode implements AutoCloseable {
  private static final Path JAR = Path.of("target", "relay.jar");
  private static final Path LOGS = Path.of("target", "relay-logs");
  /** The default {@code RELAY_AUDIENCE}, which tokens for the access API carry. */
  private static final String AUDIENCE = "http://127.0.0.1:3000";
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  final int access = TestNode.freePort();
  final int relay = TestNode.freePort();
  final int management = TestNode.freePort();
  final int remote = TestNode.freePort();
  private final String secret;
  private final Path log;
  private final Process process;
  /** Kills the node if the test JVM stops before {@link #close}. */
  private final Thread hook;
  private final HttpClient http = HttpClient.newHttpClient();

  /**
   * @param name the log file's prefix under target/relay-logs
   * @param jvmOptions such as {@code -Xmx512m}
   * @param env RELAY_* settings beyond the ports, secret and URL
   * @param descriptorLimit {@code ulimit -n} for the node, or 0 to keep the test's
   */
  private JarNode(String name, String secret, List<String> jvmOptions, Map<String, String> env, int descriptorLimit)
      throws IOException {
    this.secret = secret;
    Files.createDirectories(LOGS);
    this.log = Files.createTempFile(LOGS, name, ".log");
    List<String> java = new ArrayList<>();
    java.add(ProcessHandle.current().info().command().orElse("java"));
    java.addAll(jvmOptions);
    if (BufferChecks.ON) {
      java.add("-D" + BufferChecks.PROPERTY + "=true"); // the node checks as the tests do
    }
    java.addAll(List.of("-jar", JAR.toString()));
    List<String> command = new ArrayList<>();
    if (descriptorLimit > 0) {
      // exec: the shell becomes the JVM, so the process's pid is the node's
      command.addAll(List.of("bash", "-c", "ulimit -n " + descriptorLimit + " && exec \"$@\"", "bash"));
    }
    command.addAll(java);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> environment = builder.environment();
    environment.keySet().removeIf(k -> k.startsWith("RELAY_"));
    Map<String, String> settings = new HashMap<>();
    settings.put("RELAY_SECRET", secret);
    settings.put("RELAY_PORT_ACCESS", String.valueOf(access));
    settings.put("RELAY_PORT_RELAY", String.valueOf(relay));
    settings.put("RELAY_PORT_MANAGEMENT", String.valueOf(management));
    settings.put("RELAY_PORT_REMOTE", String.valueOf(remote));
    settings.put("RELAY_URL", "ws://127.0.0.1:" + relay);
    // a single node: no cluster links to protect (multi-jvm-tests runs them over TLS)
    settings.put("RELAY_CLUSTER_TRANSPORT", "tcp");
    settings.putAll(env);
    environment.putAll(settings);
    this.process = builder.start();
    this.hook = new Thread(process::destroyForcibly, "kill-" + name + "-" + process.pid());
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** Starts a node and waits until it is ready. */
  static JarNode start(String name, String secret, List<String> jvmOptions, Map<String, String> env, int descriptorLimit)
      throws IOException {
    JarNode node = new JarNode(name, secret, jvmOptions, env, descriptorLimit);
    try {
      Await.until("the node is ready (log: " + node.log + ")", READY_TIMEOUT, () -> {
        if (!node.process.isAlive()) {
          throw new AssertionError("the node exited while starting (log: " + node.log + ")");
        }
        return node.status("/ready") == 200;
      });
    } catch (RuntimeException | Error e) {
      node.close();
      throw e;
    }
    return node;
  }

  Path log() {
    return log;
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** A session token for {@code topic} with {@code scopes}, booking {@code b-<topic>}. */
  String token(String topic, String... scopes) {
    return Tokens.sign(Tokens.session(topic, List.of(scopes), "b-" + topic.replace('/', '-')).audience(AUDIENCE).build(), secret);
  }

  /** The status of {@code POST /session/{topic}} with {@code token}; -1 when the node does not answer. */
  int postSession(String topic, String token) {
    try {
      return http.send(sessionRequest(topic, token), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** A one-time relay URI for {@code topic}, from the access API; fails when none is given. */
  String uri(String topic, String... scopes) throws IOException {
    HttpResponse<String> response;
    try {
      response = http.send(sessionRequest(topic, token(topic, scopes)), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    if (response.statusCode() != 200) {
      throw new AssertionError("no code for " + topic + ": " + response.statusCode() + " " + response.body());
    }
    return response.body().replaceAll(".*\"uri\":\"([^\"]+)\".*", "$1");
  }

  private HttpRequest sessionRequest(String topic, String token) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + access + "/session/" + topic))
        .header("Authorization", token)
        .timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.noBody())
        .build();
  }

  /** The status of a GET on the management port; -1 when the node does not answer within 5 s. */
  int status(String path) {
    HttpResponse<Void> response = get(path, Duration.ofSeconds(5), HttpResponse.BodyHandlers.discarding());
    return response == null ? -1 : response.statusCode();
  }

  /** One sample from the node's /metrics; -1 when the node does not answer; fails when it is absent. */
  double metric(String sample) {
    HttpResponse<String> response = get("/metrics", Duration.ofSeconds(10), HttpResponse.BodyHandlers.ofString());
    if (response == null) {
      return -1;
    }
    String body = response.body();
    for (String line : body.split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    throw new AssertionError("no sample " + sample + " in /metrics");
  }

  /**
   * Kills the node's process (by its pid) and waits for it to exit; fails if the node logged a
   * fault in its accounting of relayed bytes ({@link BufferChecks}).
   */
  @Override
  public void close() {
    process.destroyForcibly();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway, and finds the node gone
    }
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        throw new AssertionError("the node (pid " + process.pid() + ") did not exit within 10 s of SIGKILL");
      }
      if (Files.readString(log, StandardCharsets.ISO_8859_1).contains("buffer accounting fault")) {
        throw new AssertionError("the node logged a buffer accounting fault; see " + log);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the node's log " + log, e);
    }
  }

  /** A GET on the management port; null when the node does not answer in time. */
  private <T> HttpResponse<T> get(String path, Duration timeout, HttpResponse.BodyHandler<T> body) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + path)).timeout(timeout).build(), body);
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
