package io.relay.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A network of the test's own making for node JVMs, as pods have: one Linux network namespace
 * per node, each joined by a veth pair to one bridge in the root namespace, each node with an
 * address of its own in a /24 ({@code 10.77.N.0/24}, N one no route uses yet); the root namespace
 * holds {@code .1}, so the proxy and the test's clients reach every node. A node is cut off from
 * everything by taking its veth down, or from given peers only by an nftables table inside its
 * namespace.
 *
 * <p>Every name carries this JVM's pid and the subnet (in base 36), so parallel runs do not
 * collide, and a later run removes what a crashed run left (its pid no longer lives). Everything
 * is removed on {@link #close}, and by a shutdown hook if the test JVM is stopped first.
 */
public final class PodNetwork implements AutoCloseable {
  private static final String PREFIX = "relaypn-";
  /** {@code relaypn-<pid>-<subnet>-n<i>}, {@code rpb<pid>-<subnet>}, {@code rpv<pid>-<subnet>-<i>}. */
  private static final Pattern OURS = Pattern.compile("(?:relaypn-|rpb|rpv)([0-9a-z]+)-([0-9a-z]+)(?:-n?\\d+)?");
  private static final String FILTER_TABLE = "relay_partition";
  private static final int FIRST_HOST = 10;
  private static final long COMMAND_SECONDS = 15;
  private static final Path ALLOCATION_LOCK = Path.of(System.getProperty("java.io.tmpdir"), "relay-pod-network.lock");

  /** One node's place: its namespace, the root side of its veth and its address. */
  public record Slot(String namespace, String veth, String address) {}

  private final String tag;
  private final String bridge;
  private final int subnet;
  private final Map<String, Slot> slots = new LinkedHashMap<>();
  private final Thread cleanup = new Thread(this::removeAll, "remove-pod-network");
  private boolean closed;

  private PodNetwork(int subnet) {
    this.subnet = subnet;
    this.tag = Long.toString(ProcessHandle.current().pid(), 36) + "-" + Integer.toString(subnet, 36);
    this.bridge = "rpb" + tag;
  }

  /**
   * Why node namespaces cannot be made here (not root, no {@code ip}, no {@code nft}, or the
   * kernel refuses), or empty when they can.
   */
  public static Optional<String> unavailable() {
    String user = System.getProperty("user.name");
    if (!"root".equals(user)) {
      return Optional.of("network namespaces need root (running as " + user + ")");
    }
    for (String tool : List.of("ip", "nft")) {
      if (run(List.of("sh", "-c", "command -v " + tool), false).exit() != 0) {
        return Optional.of("no '" + tool + "' command (apt-get install iproute2 nftables)");
      }
    }
    String probe = PREFIX + Long.toString(ProcessHandle.current().pid(), 36) + "-probe";
    Command made = run(List.of("ip", "netns", "add", probe), false);
    if (made.exit() != 0) {
      return Optional.of("ip netns add failed: " + made.output().strip());
    }
    run(List.of("ip", "netns", "del", probe), false);
    return Optional.empty();
  }

  /** Removes what crashed runs left, then makes a bridge on a /24 no route uses yet. */
  public static PodNetwork create() {
    removeLeftovers();
    try (FileChannel lockFile = FileChannel.open(ALLOCATION_LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = lockFile.lock()) {
      Set<Integer> used = new TreeSet<>();
      Matcher routes = Pattern.compile("10\\.77\\.(\\d+)\\.").matcher(run(List.of("ip", "-4", "route"), true).output());
      while (routes.find()) {
        used.add(Integer.parseInt(routes.group(1)));
      }
      int subnet = 0;
      while (used.contains(subnet)) {
        subnet++;
      }
      if (subnet > 255) {
        throw new IllegalStateException("every 10.77.N.0/24 is routed already: remove stale bridges (ip -4 route)");
      }
      PodNetwork network = new PodNetwork(subnet);
      Runtime.getRuntime().addShutdownHook(network.cleanup);
      try {
        run(List.of("ip", "link", "add", network.bridge, "type", "bridge"), true);
        run(List.of("ip", "addr", "add", "10.77." + subnet + ".1/24", "dev", network.bridge), true);
        run(List.of("ip", "link", "set", network.bridge, "up"), true);
      } catch (RuntimeException e) {
        network.close(); // the bridge, and its route, go with the network that failed
        throw e;
      }
      return network;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Makes {@code node}'s namespace and link; its address is {@code 10.77.N.(10+i)}. */
  public synchronized Slot add(String node) {
    int i = slots.size() + 1;
    Slot slot = new Slot(PREFIX + tag + "-n" + i, "rpv" + tag + "-" + i, "10.77." + subnet + "." + (FIRST_HOST + i));
    slots.put(node, slot);
    run(List.of("ip", "netns", "add", slot.namespace()), true);
    run(List.of("ip", "link", "add", slot.veth(), "type", "veth", "peer", "name", "eth0", "netns", slot.namespace()), true);
    run(List.of("ip", "link", "set", slot.veth(), "master", bridge), true);
    run(List.of("ip", "link", "set", slot.veth(), "up"), true);
    inside(slot, "ip", "addr", "add", slot.address() + "/24", "dev", "eth0");
    inside(slot, "ip", "link", "set", "eth0", "up");
    inside(slot, "ip", "link", "set", "lo", "up");
    return slot;
  }

  /** {@code command} run inside {@code slot}'s namespace: what to start a node with. */
  public static List<String> launcher(Slot slot, List<String> command) {
    List<String> inside = new ArrayList<>(List.of("ip", "netns", "exec", slot.namespace()));
    inside.addAll(command);
    return inside;
  }

  /** Takes {@code slot}'s link down: the node reaches nothing and nothing reaches it. */
  public void cut(Slot slot) {
    run(List.of("ip", "link", "set", slot.veth(), "down"), true);
  }

  /** Brings {@code slot}'s link up again. */
  public void reconnect(Slot slot) {
    run(List.of("ip", "link", "set", slot.veth(), "up"), true);
  }

  /**
   * Drops every packet between {@code slot} and {@code peers} inside {@code slot}'s namespace
   * (both directions); the proxy and the clients still reach it.
   */
  public void isolate(Slot slot, List<Slot> peers) {
    String addresses = peers.stream().map(Slot::address).collect(Collectors.joining(", "));
    String rules =
        "table inet " + FILTER_TABLE + " {\n"
            + "  chain in { type filter hook input priority 0; policy accept; ip saddr { " + addresses + " } drop; }\n"
            + "  chain out { type filter hook output priority 0; policy accept; ip daddr { " + addresses + " } drop; }\n"
            + "}\n";
    run(List.of("ip", "netns", "exec", slot.namespace(), "nft", "-f", "-"), true, rules);
  }

  /** Removes {@link #isolate}'s rules. */
  public void heal(Slot slot) {
    inside(slot, "nft", "delete", "table", "inet", FILTER_TABLE);
  }

  /** Removes the namespaces, links and bridge (filter rules go with their namespaces). */
  @Override
  public synchronized void close() {
    removeAll();
    try {
      Runtime.getRuntime().removeShutdownHook(cleanup);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs anyway
    }
  }

  private synchronized void removeAll() {
    if (closed) {
      return;
    }
    closed = true;
    for (Slot slot : slots.values()) {
      run(List.of("ip", "link", "del", slot.veth()), false);
      killInside(slot.namespace());
      run(List.of("ip", "netns", "del", slot.namespace()), false);
    }
    run(List.of("ip", "link", "del", bridge), false);
  }

  /**
   * Kills what still runs in {@code namespace} (a node its test could not stop, or one of a test
   * JVM that was killed): deleting the namespace alone would leave it running where no one can
   * find it.
   */
  private static void killInside(String namespace) {
    run(List.of("ip", "netns", "pids", namespace), false).output().lines()
        .map(String::strip)
        .filter(pid -> pid.matches("\\d+"))
        .forEach(pid -> ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly));
  }

  /** Namespaces and links named for a test JVM that no longer runs. */
  private static void removeLeftovers() {
    List<String> namespaces = run(List.of("ip", "netns", "list"), true).output().lines().map(l -> l.split(" ")[0]).toList();
    List<String> links =
        run(List.of("ip", "-o", "link", "show"), true).output().lines()
            .map(l -> l.split(": ")[1].split("@")[0]).toList();
    for (String name : namespaces) {
      if (leftOver(name)) {
        killInside(name);
        run(List.of("ip", "netns", "del", name), false);
      }
    }
    for (String name : links) {
      if (leftOver(name)) {
        run(List.of("ip", "link", "del", name), false);
      }
    }
  }

  private static boolean leftOver(String name) {
    Matcher ours = OURS.matcher(name);
    if (!ours.matches()) {
      return false;
    }
    long pid = Long.parseLong(ours.group(1), 36);
    return ProcessHandle.of(pid).isEmpty();
  }

  private static void inside(Slot slot, String... command) {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", slot.namespace()));
    full.addAll(List.of(command));
    run(full, true);
  }

  private static Command run(List<String> command, boolean check) {
    return run(command, check, null);
  }

  private static Command run(List<String> command, boolean check, String input) {
    Command result;
    try {
      result = Command.run(command, input, Duration.ofSeconds(COMMAND_SECONDS));
    } catch (UncheckedIOException e) {
      if (check) {
        throw e;
      }
      return new Command(-1, String.valueOf(e.getMessage()));
    }
    if (check && result.exit() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed (" + result.exit() + "): " + result.output().strip());
    }
    return result;
  }
}
