package io.relay.harness;

import io.relay.memory.BufferChecks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How the harness starts a node JVM: a small heap, the serial collector and the first JIT tier
 * only (its nodes mostly live for seconds or minutes, and several share two cores), and classes mapped
 * from a class-data archive of the jar instead of loaded and verified one by one, so a node is
 * ready sooner and spends less CPU starting.
 *
 * <p>The archive ({@code relay.jsa} beside the jar) is made once per built jar, by a node that
 * starts, becomes ready and is stopped with SIGTERM: the JVM writes the classes it loaded when it
 * exits. Test JVMs running side by side take turns through a file lock. Where no archive can be
 * made (a JDK without a base archive), nodes start without one; the JVM checks an archive against
 * the jar it was made from and ignores one that does not match.
 */
public final class NodeCommand {
  private static final List<String> OPTIONS = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
  private static final Duration ARCHIVE_DEADLINE = Duration.ofSeconds(60);
  /** Where this JVM's nodes map their classes from, by jar, once looked up or made. */
  private static final Map<Path, Path> ARCHIVES = new HashMap<>();

  private NodeCommand() {}

  /**
   * {@code java} and its options for a node of {@code config.jar()}, up to (not including) {@code
   * -jar}: each jar (the current build, an earlier release's) has an archive of its own.
   */
  public static synchronized List<String> java(HarnessConfig config) {
    List<String> command = plain();
    Path archive = ARCHIVES.computeIfAbsent(config.jar().toAbsolutePath(), jar -> lookUpOrMake(config));
    if (Files.isRegularFile(archive)) {
      command.add("-XX:SharedArchiveFile=" + archive.toAbsolutePath());
    }
    return command;
  }

  private static List<String> plain() {
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(OPTIONS);
    if (BufferChecks.ON) {
      command.add("-D" + BufferChecks.PROPERTY + "=true"); // the tests' nodes check as the tests do
    }
    return command;
  }

  /** The jar's archive, made first if it is missing or older than the jar. */
  private static Path lookUpOrMake(HarnessConfig config) {
    Path jar = config.jar().toAbsolutePath();
    Path archive = jar.resolveSibling("relay.jsa");
    try (FileChannel lockFile =
            FileChannel.open(jar.resolveSibling("relay.jsa.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = lockFile.lock()) {
      if (Files.isRegularFile(archive) && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) > 0) {
        return archive;
      }
      Path made = jar.resolveSibling("relay.jsa.part");
      Files.deleteIfExists(made);
      List<String> command = plain();
      command.add("-XX:ArchiveClassesAtExit=" + made);
      try (NodeProcess node = new NodeProcess(config, "class-data", command, List.of(), "ws://127.0.0.1", Map.of("RELAY_DRAIN_DELAY", "100ms", "RELAY_CLUSTER_TRANSPORT", "tcp"), Map.of())) {
        node.awaitReady(ARCHIVE_DEADLINE);
        node.process().terminate();
        node.process().awaitExit(ARCHIVE_DEADLINE);
      }
      if (Files.isRegularFile(made)) {
        Files.move(made, archive, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } else {
        System.out.println("no class-data archive was written (see the class-data node's log): nodes start without one");
      }
      return archive;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
