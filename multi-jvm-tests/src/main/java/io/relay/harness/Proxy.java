package io.relay.harness;

import io.relay.node.LoopbackPorts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A real consistent-hashing proxy in front of the relay nodes (nginx or HAProxy), configured from
 * the templates in {@code deploy/proxy/}: the relay port hashes the path, the access port goes
 * round robin. Reloading it with a new node list keeps established WebSockets on their old
 * workers, as a production reload does.
 */
public abstract class Proxy implements AutoCloseable {
  public final int relayPort = LoopbackPorts.free();
  public final int accessPort = LoopbackPorts.free();
  protected final HarnessConfig config;
  protected final Path dir;
  private ManagedProcess process;

  protected Proxy(HarnessConfig config, String name) {
    this.config = config;
    this.dir = config.workDir().resolve(name + "-" + relayPort);
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The proxy's name in reports: nginx or haproxy. */
  public abstract String kind();

  protected abstract String binary();

  protected abstract String template();

  protected abstract Path configFile();

  protected abstract List<String> checkCommand();

  protected abstract List<String> runCommand();

  protected abstract String reloadSignal();

  protected abstract String relayServer(NodeProcess node);

  protected abstract String accessServer(NodeProcess node);

  /** The relay URL clients should be given: this proxy's relay port. */
  public String relayUrl() {
    return "ws://127.0.0.1:" + relayPort;
  }

  public String accessUrl() {
    return "http://127.0.0.1:" + accessPort;
  }

  /** Writes the configuration for {@code nodes} and starts the proxy. */
  public Proxy start(List<NodeProcess> nodes) {
    if (!Files.isExecutable(Path.of(binary()))) {
      throw new AssertionError(kind() + " is not installed (" + binary() + "): apt-get install " + kind());
    }
    writeConfig(nodes);
    process = ManagedProcess.start(kind(), runCommand(), Map.of(), dir.resolve(kind() + ".out"));
    Await.until(kind() + " listens on " + relayPort, Duration.ofSeconds(15), () -> listening(relayPort) && listening(accessPort));
    return this;
  }

  /** Rewrites the configuration for {@code nodes} and reloads; returns once new workers serve. */
  public void reload(List<NodeProcess> nodes) {
    writeConfig(nodes);
    Set<Long> before = workers();
    process.signal(reloadSignal());
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
          Files.readString(config.proxyTemplates().resolve(template()))
              .replace("${PREFIX}", dir.toAbsolutePath().toString())
              .replace("${RELAY_LISTEN}", "127.0.0.1:" + relayPort)
              .replace("${ACCESS_LISTEN}", "127.0.0.1:" + accessPort)
              .replace("${RELAY_UPSTREAMS}", nodes.stream().map(this::relayServer).collect(Collectors.joining("\n")))
              .replace("${ACCESS_UPSTREAMS}", nodes.stream().map(this::accessServer).collect(Collectors.joining("\n")));
      Files.writeString(configFile(), text);
      Process check = new ProcessBuilder(checkCommand()).redirectErrorStream(true).start();
      String output = new String(check.getInputStream().readAllBytes());
      if (!check.waitFor(15, TimeUnit.SECONDS) || check.exitValue() != 0) {
        throw new AssertionError(kind() + " refused its configuration " + configFile() + ":\n" + output);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
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

  /** nginx with {@code hash $uri consistent;}. */
  public static final class Nginx extends Proxy {
    public Nginx(HarnessConfig config) {
      super(config, "nginx");
    }

    @Override
    public String kind() {
      return "nginx";
    }

    @Override
    protected String binary() {
      return "/usr/sbin/nginx";
    }

    @Override
    protected String template() {
      return "nginx.conf.template";
    }

    @Override
    protected Path configFile() {
      return dir.resolve("nginx.conf").toAbsolutePath();
    }

    @Override
    protected List<String> checkCommand() {
      return List.of(binary(), "-t", "-q", "-p", dir.toAbsolutePath() + "/", "-c", configFile().toString(), "-e", dir.toAbsolutePath() + "/error.log");
    }

    @Override
    protected List<String> runCommand() {
      return List.of(binary(), "-p", dir.toAbsolutePath() + "/", "-c", configFile().toString(), "-e", dir.toAbsolutePath() + "/error.log");
    }

    @Override
    protected String reloadSignal() {
      return "HUP";
    }

    @Override
    protected String relayServer(NodeProcess node) {
      return "    server 127.0.0.1:" + node.relayPort + " max_fails=0;";
    }

    @Override
    protected String accessServer(NodeProcess node) {
      return "    server 127.0.0.1:" + node.accessPort + ";";
    }
  }

  /** HAProxy with {@code balance uri} and {@code hash-type consistent}, keyed on server ids. */
  public static final class Haproxy extends Proxy {
    public Haproxy(HarnessConfig config) {
      super(config, "haproxy");
    }

    @Override
    public String kind() {
      return "haproxy";
    }

    @Override
    protected String binary() {
      return "/usr/sbin/haproxy";
    }

    @Override
    protected String template() {
      return "haproxy.cfg.template";
    }

    @Override
    protected Path configFile() {
      return dir.resolve("haproxy.cfg").toAbsolutePath();
    }

    @Override
    protected List<String> checkCommand() {
      return List.of(binary(), "-c", "-q", "-f", configFile().toString());
    }

    @Override
    protected List<String> runCommand() {
      return List.of(binary(), "-W", "-db", "-f", configFile().toString());
    }

    @Override
    protected String reloadSignal() {
      return "USR2";
    }

    @Override
    protected String relayServer(NodeProcess node) {
      // the id is stable for a node's address, so the ring only changes where nodes change
      return "  server relay-" + node.remotePort + " 127.0.0.1:" + node.relayPort + " id " + node.remotePort;
    }

    @Override
    protected String accessServer(NodeProcess node) {
      return "  server access-" + node.remotePort + " 127.0.0.1:" + node.accessPort + " id " + node.remotePort;
    }
  }
}
