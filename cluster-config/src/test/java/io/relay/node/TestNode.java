package io.relay.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;

/** A relay node started in this JVM on free loopback ports, for tests. */
final class TestNode implements AutoCloseable {
  static final String SECRET = Tokens.SECRET;
  static final String AUDIENCE = Tokens.AUDIENCE;

  final int accessPort;
  final int relayPort;
  final int managementPort = freePort();
  /** The address the management port binds (relay.management-host, by default relay.host). */
  final String managementHost;
  final int remotePort;
  /** Whether the access and relay ports serve HTTPS and WSS. */
  final boolean tls;
  final ActorSystem<Void> system;
  private final HttpClient http = HttpClient.newHttpClient();

  private TestNode(int remotePort, Map<String, Object> overrides) {
    this(remotePort, overrides, Map.of());
  }

  /** {@code environment} stands for the process's environment where the node looks beyond its settings. */
  private TestNode(int remotePort, Map<String, Object> overrides, Map<String, String> environment) {
    this.remotePort = remotePort;
    this.accessPort = (int) overrides.getOrDefault("relay.port-access", freePort());
    this.relayPort = (int) overrides.getOrDefault("relay.port-relay", freePort());
    this.tls = overrides.containsKey("relay.tls-cert");
    this.managementHost = (String) overrides.getOrDefault("relay.management-host", "127.0.0.1");
    Map<String, Object> settings = new HashMap<>();
    settings.put("relay.secret", SECRET);
    settings.put("relay.audience", AUDIENCE);
    settings.put("relay.host", "127.0.0.1");
    settings.put("relay.port-access", accessPort);
    settings.put("relay.port-relay", relayPort);
    settings.put("relay.port-management", managementPort);
    settings.put("relay.port-remote", remotePort);
    settings.put("relay.url", "ws://127.0.0.1:" + relayPort);
    settings.put("relay.seed-nodes", "");
    // in-process nodes share one JVM and loopback: the cluster links' TLS is tested with node JVMs
    settings.put("relay.cluster-transport", "tcp");
    settings.put("relay.drain-delay", "100ms");
    // the tests' HTTP clients keep idle connections open: do not wait the production 3 s for them
    settings.put("relay.unbind-deadline", "200ms");
    settings.put("pekko.coordinated-shutdown.exit-jvm", "off");
    settings.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    settings.putAll(overrides);
    settings.put("pekko.cluster.jmx.enabled", "off");
    settings.put("pekko.log-dead-letters-during-shutdown", "off");
    // several nodes share this JVM's two cores: tolerate the pauses that causes
    settings.putIfAbsent("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "10s");
    Config config = ConfigFactory.parseMap(settings);
    this.system = RelayNode.start(RelayNode.load(config, environment));
  }

  /** Starts a single-node cluster and waits until it is ready. */
  static TestNode start(Map<String, Object> overrides) {
    TestNode node = new TestNode(freePort(), overrides);
    node.awaitReady(Duration.ofSeconds(30));
    return node;
  }

  /**
   * Starts a single-node cluster as {@link #start(Map)} does, as if {@code environment} were the
   * process's environment (the practable variables a node names in a warning), and waits until it
   * is ready.
   */
  static TestNode start(Map<String, Object> overrides, Map<String, String> environment) {
    TestNode node = new TestNode(freePort(), overrides, environment);
    node.awaitReady(Duration.ofSeconds(30));
    return node;
  }

  static TestNode start() {
    return start(Map.of());
  }

  /** Starts a node that joins {@code seed}'s cluster and waits until it is ready. */
  static TestNode joining(TestNode seed, Map<String, Object> overrides) {
    TestNode node = launching(seed, overrides);
    node.awaitReady(Duration.ofSeconds(30));
    return node;
  }

  /** Starts a node that joins {@code seed}'s cluster, without waiting for anything. */
  static TestNode launching(TestNode seed, Map<String, Object> overrides) {
    Map<String, Object> settings = new HashMap<>(overrides);
    settings.put("relay.seed-nodes", seed.address());
    return new TestNode(freePort(), settings);
  }

  /** This node's cluster address. */
  String address() {
    return "pekko://relay@127.0.0.1:" + remotePort;
  }

  /** The status of {@code /ready}: 200 when ready. */
  int readyStatus() {
    try {
      return http.send(
              HttpRequest.newBuilder(management("/ready")).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The Prometheus exposition of {@code /metrics}. */
  String metrics() {
    try {
      return http.send(
              HttpRequest.newBuilder(management("/metrics")).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException e) {
      throw new AssertionError("cannot scrape /metrics", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** One sample's value from {@code /metrics}, or -1 when absent. */
  double metric(String sample) {
    for (String line : metrics().split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    return -1;
  }

  /** How many members {@code /cluster/members} lists. */
  int memberCount() {
    try {
      HttpResponse<String> response =
          http.send(
              HttpRequest.newBuilder(management("/cluster/members")).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return new com.fasterxml.jackson.databind.ObjectMapper().readTree(response.body()).get("members").size();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Asks the cluster, through this node's management API, to let {@code member} leave; this node
   * needs {@code relay.management-writes} on.
   */
  void leave(TestNode member) {
    HttpResponse<String> response =
        managementWrite("PUT", "/cluster/members/" + member.address(), "operation=Leave", Tokens.admin("relay:admin"));
    if (response.statusCode() != 200) {
      throw new AssertionError("leave was refused: " + response.statusCode() + " " + response.body());
    }
  }

  /**
   * A form-encoded request with {@code method} to this node's management port; {@code
   * authorization} is sent as the Authorization header unless null.
   */
  HttpResponse<String> managementWrite(String method, String path, String form, String authorization) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(management(path))
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .method(method, HttpRequest.BodyPublishers.ofString(form));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new AssertionError(method + " " + path + " on the management port failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** A GET on this node's management port. */
  HttpResponse<String> managementGet(String path) throws IOException {
    try {
      return http.send(HttpRequest.newBuilder(management(path)).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  URI management(String path) {
    return URI.create("http://" + managementHost + ":" + managementPort + path);
  }

  URI access(String pathAndQuery) {
    return URI.create((tls ? "https" : "http") + "://127.0.0.1:" + accessPort + pathAndQuery);
  }

  URI relay(String pathAndQuery) {
    return URI.create("ws://127.0.0.1:" + relayPort + pathAndQuery);
  }

  /** Polls {@code /ready} until it answers 200, failing with what it last saw. */
  void awaitReady(Duration timeout) {
    String[] last = {"no answer"};
    URI ready = management("/ready");
    Await.until(
        "the node is ready",
        timeout,
        () -> {
          try {
            HttpResponse<String> response =
                http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            last[0] = response.statusCode() + " " + response.body();
            return response.statusCode() == 200;
          } catch (IOException e) {
            last[0] = e.toString();
            return false;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
          }
        },
        () -> "/ready said: " + last[0]);
  }

  @Override
  public void close() {
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException | TimeoutException e) {
      throw new AssertionError("the node did not terminate within 30 s", e);
    }
  }

  static int freePort() {
    return LoopbackPorts.free();
  }

}
