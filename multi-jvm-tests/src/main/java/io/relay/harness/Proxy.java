package io.relay.harness;

import io.relay.node.LoopbackPorts;
import io.relay.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A real consistent-hashing proxy in front of the relay nodes (nginx or HAProxy), configured from
 * the templates in {@code deploy/proxy/}: the relay port hashes the path, the access port goes
 * round robin. Reloading it with a new node list keeps established WebSockets on their old
 * workers, as a production reload does.
 */
public final class Proxy implements AutoCloseable {
  /**
   * What differs between the proxies: the binary, its configuration template and file, the
   * arguments that check and run a configuration (given the proxy's directory and configuration
   * file), the signal that reloads it, and how one node is written as a relay and an access
   * upstream.
   */
  private record Kind(
      String name,
      String binary,
      String template,
      String configName,
      BiFunction<Path, Path, List<String>> checkArgs,
      BiFunction<Path, Path, List<String>> runArgs,
      String reloadSignal,
      Function<NodeProcess, String> relayServer,
      Function<NodeProcess, String> accessServer) {}

  /** nginx with {@code hash $uri consistent;}. */
  private static final Kind NGINX =
      new Kind(
          "nginx",
          "/usr/sbin/nginx",
          "nginx.conf.template",
          "nginx.conf",
          (dir, file) -> List.of("-t", "-q", "-p", dir + "/", "-c", file.toString(), "-e", dir + "/error.log"),
          (dir, file) -> List.of("-p", dir + "/", "-c", file.toString(), "-e", dir + "/error.log"),
          "HUP",
          node -> "    server " + node.host + ":" + node.relayPort + " max_fails=0;",
          node -> "    server " + node.host + ":" + node.accessPort + ";");

  /**
   * HAProxy with {@code balance uri} and {@code hash-type consistent}, keyed on server ids: the id
   * is stable for a node's address, so the ring only changes where nodes change.
   */
  private static final Kind HAPROXY =
      new Kind(
          "haproxy",
          "/usr/sbin/haproxy",
          "haproxy.cfg.template",
          "haproxy.cfg",
          (dir, file) -> List.of("-c", "-q", "-f", file.toString()),
          (dir, file) -> List.of("-W", "-db", "-f", file.toString()),
          "USR2",
          node -> "  server relay-" + node.remotePort + " " + node.host + ":" + node.relayPort + " id " + node.remotePort,
          node -> "  server access-" + node.remotePort + " " + node.host + ":" + node.accessPort + " id " + node.remotePort);

  public final int relayPort = LoopbackPorts.free();
  public final int accessPort = LoopbackPorts.free();
  private final HarnessConfig config;
  private final Kind kind;
  private final Path dir;
  private final Path configFile;
  private ManagedProcess process;

  private Proxy(HarnessConfig config, Kind kind) {
    this.config = config;
    this.kind = kind;
    this.dir = config.workDir().resolve(kind.name() + "-" + relayPort).toAbsolutePath();
    this.configFile = dir.resolve(kind.configName());
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A proxy of {@code kind}: {@code nginx} or {@code haproxy}. */
  public static Proxy of(String kind, HarnessConfig config) {
    return switch (kind) {
      case "nginx" -> new Proxy(config, NGINX);
      case "haproxy" -> new Proxy(config, HAPROXY);
      default -> throw new IllegalArgumentException("no proxy " + kind + ": nginx or haproxy");
    };
  }

  public static Proxy nginx(HarnessConfig config) {
    return of("nginx", config);
  }

  /** The proxy's name in reports: nginx or haproxy. */
  public String kind() {
    return kind.name();
  }

  /** The relay URL clients should be given: this proxy's relay port. */
  public String relayUrl() {
    return "ws://127.0.0.1:" + relayPort;
  }

  public String accessUrl() {
    return "http://127.0.0.1:" + accessPort;
  }

  /** Writes the configuration for {@code nodes} and starts the proxy. */
  public Proxy start(List<NodeProcess> nodes) {
    if (!Files.isExecutable(Path.of(kind.binary()))) {
      throw new AssertionError(kind() + " is not installed (" + kind.binary() + "): apt-get install " + kind());
    }
    writeConfig(nodes);
    process = ManagedProcess.start(kind(), command(kind.runArgs()), Map.of(), dir.resolve(kind() + ".out"));
    Await.until(kind() + " listens on " + relayPort, Duration.ofSeconds(15), () -> listening(relayPort) && listening(accessPort));
    return this;
  }

  /**
   * Rewrites the configuration for {@code nodes} and reloads; returns once workers with the new
   * configuration have started. The old workers may still accept a connection until they have
   * been told to stop (nginx: their QUIT, sent by the master just after the new workers start),
   * and they keep serving the connections they hold.
   */
  public void reload(List<NodeProcess> nodes) {
    writeConfig(nodes);
    Set<Long> before = workers();
    process.signal(kind.reloadSignal());
    Await.until(kind() + " started workers with the new configuration", Duration.ofSeconds(15), () -> {
      Set<Long> now = workers();
      now.removeAll(before);
      return !now.isEmpty();
    });
  }

  /**
   * Stops the proxy: SIGTERM lets the master stop its workers (including old ones still serving
   * connections from before a reload); whatever is left, master or worker, is then killed by pid.
   */
  private void stop() {
    Set<Long> children = workers();
    process.terminate();
    try {
      process.awaitExit(java.time.Duration.ofSeconds(5));
    } catch (AssertionError stillRunning) {
      // killed below
    }
    children.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
    process.close();
  }

  private Set<Long> workers() {
    return ProcessHandle.of(process.pid())
        .map(p -> p.children().map(ProcessHandle::pid).collect(Collectors.toSet()))
        .orElse(Set.of());
  }

  private void writeConfig(List<NodeProcess> nodes) {
    try {
      String text =
          Files.readString(config.proxyTemplates().resolve(kind.template()))
              .replace("${PREFIX}", dir.toString())
              .replace("${RELAY_LISTEN}", "127.0.0.1:" + relayPort)
              .replace("${ACCESS_LISTEN}", "127.0.0.1:" + accessPort)
              .replace("${RELAY_UPSTREAMS}", nodes.stream().map(kind.relayServer()).collect(Collectors.joining("\n")))
              .replace("${ACCESS_UPSTREAMS}", nodes.stream().map(kind.accessServer()).collect(Collectors.joining("\n")));
      Files.writeString(configFile, text);
      Command check = Command.run(command(kind.checkArgs()), null, Duration.ofSeconds(15));
      if (check.exit() != 0) {
        throw new AssertionError(kind() + " refused its configuration " + configFile + ":\n" + check.output());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private List<String> command(BiFunction<Path, Path, List<String>> args) {
    List<String> command = new ArrayList<>();
    command.add(kind.binary());
    command.addAll(args.apply(dir, configFile));
    return command;
  }

  private static boolean listening(int port) {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Override
  public void close() {
    if (process != null) {
      stop();
    }
  }
}
