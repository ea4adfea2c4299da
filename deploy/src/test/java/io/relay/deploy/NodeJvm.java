package io.relay.deploy;

import io.relay.harness.HarnessConfig;
import io.relay.harness.ManagedProcess;
import io.relay.harness.NodeCommand;
import io.relay.node.LoopbackPorts;
import io.relay.testing.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A node JVM from the built relay.jar on free loopback ports, killed by pid on close. */
final class NodeJvm implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  final int accessPort = LoopbackPorts.free();
  final int relayPort = LoopbackPorts.free();
  final int managementPort = LoopbackPorts.free();
  final int remotePort = LoopbackPorts.free();
  private final String name;
  private ManagedProcess process;

  NodeJvm(String name) {
    this.name = name;
  }

  /** Starts the node with these RELAY_* settings on top of its ports. */
  NodeJvm start(Map<String, String> settings) {
    Map<String, String> env = new HashMap<>(settings);
    env.put("RELAY_HOST", "127.0.0.1");
    env.put("RELAY_PORT_ACCESS", String.valueOf(accessPort));
    env.put("RELAY_PORT_RELAY", String.valueOf(relayPort));
    env.put("RELAY_PORT_MANAGEMENT", String.valueOf(managementPort));
    env.put("RELAY_PORT_REMOTE", String.valueOf(remotePort));
    HarnessConfig config = HarnessConfig.fromSystemProperties();
    List<String> command = new ArrayList<>(NodeCommand.java(config));
    command.addAll(List.of("-jar", config.jar().toAbsolutePath().toString()));
    process = ManagedProcess.start(name, command, env, config.workDir().resolve(name + "-" + managementPort + ".log"));
    return this;
  }

  String managementEndpoint() {
    return "127.0.0.1:" + managementPort;
  }

  String address() {
    return "pekko://relay@127.0.0.1:" + remotePort;
  }

  Path log() {
    return process.log();
  }

  void awaitReady(Duration timeout) {
    Await.until(name + " answers 200 on /ready", timeout, () -> {
      if (!process.isAlive()) {
        throw new AssertionError(process.startFailure());
      }
      return get("/ready").statusCode() == 200;
    }, process::startFailure);
  }

  /** A GET on the management port; status -1 when it does not answer. */
  HttpResponse<String> get(String path) {
    try {
      return HTTP.send(
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + path)).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      return new Unanswered(path);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    if (process != null) {
      process.close();
    }
  }

  @Override
  public String toString() {
    return name + "@" + managementPort;
  }

  /** The answer of a request that could not be made. */
  private record Unanswered(String path) implements HttpResponse<String> {
    @Override public int statusCode() { return -1; }
    @Override public HttpRequest request() { return null; }
    @Override public java.util.Optional<HttpResponse<String>> previousResponse() { return java.util.Optional.empty(); }
    @Override public java.net.http.HttpHeaders headers() { return java.net.http.HttpHeaders.of(Map.of(), (a, b) -> true); }
    @Override public String body() { return ""; }
    @Override public java.util.Optional<javax.net.ssl.SSLSession> sslSession() { return java.util.Optional.empty(); }
    @Override public URI uri() { return URI.create("http://127.0.0.1/" + path); }
    @Override public HttpClient.Version version() { return HttpClient.Version.HTTP_1_1; }
  }
}
