package io.relay.harness;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.node.LoopbackPorts;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
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

/**
 * One relay node JVM started from the built jar, on its own ports: on loopback, or at its own
 * address inside a network namespace of a {@link PodNetwork}.
 */
public final class NodeProcess implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public final String name;
  /** The address the node binds and advertises (RELAY_HOST). */
  public final String host;
  public final int accessPort = LoopbackPorts.free();
  public final int relayPort = LoopbackPorts.free();
  public final int managementPort = LoopbackPorts.free();
  public final int remotePort = LoopbackPorts.free();
  private final ManagedProcess process;

  /**
   * @param java {@code java} and its options, from {@link NodeCommand}
   * @param seeds cluster addresses to join; empty to form a new cluster
   * @param relayUrl the public relay URL written into codes' URIs (the proxy's relay port)
   * @param extraEnv further RELAY_* settings
   * @param jvmProperties -D settings, for Pekko keys that have no RELAY_* variable
   */
  NodeProcess(
      HarnessConfig config,
      String name,
      List<String> java,
      List<String> seeds,
      String relayUrl,
      Map<String, String> extraEnv,
      Map<String, String> jvmProperties) {
    this(config, name, java, seeds, relayUrl, extraEnv, jvmProperties, null);
  }

  /**
   * A node inside {@code slot}'s namespace, bound to its address; on loopback when {@code slot}
   * is null. The process held is the JVM itself: {@code ip netns exec} enters the namespace and
   * execs the command in place.
   */
  NodeProcess(
      HarnessConfig config,
      String name,
      List<String> java,
      List<String> seeds,
      String relayUrl,
      Map<String, String> extraEnv,
      Map<String, String> jvmProperties,
      PodNetwork.Slot slot) {
    this.name = name;
    this.host = slot == null ? "127.0.0.1" : slot.address();
    Map<String, String> env = new HashMap<>();
    env.put("RELAY_SECRET", Tokens.SECRET);
    env.put("RELAY_AUDIENCE", Tokens.AUDIENCE);
    env.put("RELAY_HOST", host);
    env.put("RELAY_PORT_ACCESS", String.valueOf(accessPort));
    env.put("RELAY_PORT_RELAY", String.valueOf(relayPort));
    env.put("RELAY_PORT_MANAGEMENT", String.valueOf(managementPort));
    env.put("RELAY_PORT_REMOTE", String.valueOf(remotePort));
    env.put("RELAY_URL", relayUrl);
    env.put("RELAY_SEED_NODES", String.join(",", seeds));
    env.putAll(extraEnv);
    List<String> command = new ArrayList<>(java);
    jvmProperties.forEach((key, value) -> command.add("-D" + key + "=" + value));
    command.addAll(List.of("-jar", config.jar().toAbsolutePath().toString()));
    Path log = config.workDir().resolve(name + "-" + remotePort + ".log");
    this.process = ManagedProcess.start(name, slot == null ? command : PodNetwork.launcher(slot, command), env, log);
  }

  /** This node's cluster address. */
  public String address() {
    return "pekko://relay@" + host + ":" + remotePort;
  }

  public ManagedProcess process() {
    return process;
  }

  public boolean isReady() {
    return status("/ready") == 200;
  }

  /** Waits until {@code /ready} answers 200. */
  public long awaitReady(Duration timeout) {
    return Await.until(name + " is ready", timeout, () -> {
      if (!process.isAlive()) {
        throw new AssertionError(process.startFailure());
      }
      return isReady();
    }, process::startFailure);
  }

  /**
   * The members this node knows and their status ({@code Up}, {@code Joining}...), by address,
   * from {@code /cluster/members}; empty when the port does not answer.
   */
  public Map<String, String> members() {
    Map<String, String> members = new java.util.TreeMap<>();
    try {
      for (JsonNode member : JSON.readTree(get("/cluster/members")).path("members")) {
        members.put(member.path("node").asText(), member.path("status").asText());
      }
    } catch (IOException e) {
      return Map.of();
    }
    return members;
  }

  /**
   * The addresses of the members this node's failure detector reports unreachable, from {@code
   * /cluster/members}; empty when the port does not answer.
   */
  public java.util.Set<String> unreachable() {
    java.util.Set<String> unreachable = new java.util.TreeSet<>();
    try {
      for (JsonNode member : JSON.readTree(get("/cluster/members")).path("unreachable")) {
        unreachable.add(member.path("node").asText());
      }
    } catch (IOException e) {
      return java.util.Set.of();
    }
    return unreachable;
  }

  /**
   * The cluster roles of each member this node knows, by address, from {@code /cluster/members};
   * empty when the port does not answer.
   */
  public Map<String, java.util.Set<String>> memberRoles() {
    Map<String, java.util.Set<String>> roles = new java.util.TreeMap<>();
    try {
      for (JsonNode member : JSON.readTree(get("/cluster/members")).path("members")) {
        java.util.Set<String> of = new java.util.TreeSet<>();
        member.path("roles").forEach(role -> of.add(role.asText()));
        roles.put(member.path("node").asText(), of);
      }
    } catch (IOException e) {
      return Map.of();
    }
    return roles;
  }

  /**
   * A counter or gauge from {@code /metrics}; NaN when the node does not answer, so that no check
   * of it passes. A sample the node does not export is a mistake of the test's: it throws.
   */
  public double metric(String sample) {
    String body = get("/metrics");
    if (body.isEmpty()) {
      return Double.NaN;
    }
    for (String line : body.split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    throw new IllegalStateException(name + " exports no " + sample);
  }

  /**
   * Every sample from {@code /metrics} whose name starts with {@code prefix}, labels included
   * (counters' {@code _created} timestamps left out).
   */
  public Map<String, Double> metrics(String prefix) {
    Map<String, Double> samples = new java.util.TreeMap<>();
    for (String line : get("/metrics").split("\n")) {
      int space = line.lastIndexOf(' ');
      if (line.startsWith(prefix) && space > 0 && !line.contains("_created")) {
        samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1).trim()));
      }
    }
    return samples;
  }

  private int status(String path) {
    try {
      return HTTP.send(request(path), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private String get(String path) {
    try {
      return HTTP.send(request(path), HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private HttpRequest request(String path) {
    return HttpRequest.newBuilder(URI.create("http://" + host + ":" + managementPort + path)).timeout(Duration.ofSeconds(5)).build();
  }

  @Override
  public void close() {
    process.close();
  }

  @Override
  public String toString() {
    return name + "@" + remotePort;
  }
}
