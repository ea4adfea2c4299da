package io.relay.harness;

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
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * An earlier release of this project, built by the harness from this repository's own history so
 * that a scenario can run its nodes beside (and replace them with) the current build.
 *
 * <p>The jar is built once per commit and kept in {@link HarnessConfig#builds()} ({@code
 * ~/.cache/relay-harness/builds/<commit>/relay.jar} under Maven): a commit's jar never changes, so
 * it outlives {@code mvn clean} and serves every checkout and worktree on the machine (and a CI
 * cache of that directory), where a jar under {@code target/} would be built again, Maven run and
 * all, after every clean. The build is {@code git archive} of the commit into a scratch directory
 * and {@code mvn -B -q -DskipTests package -pl cluster-config -am} there, offline first and online
 * if the local repository lacks something; {@code package}, never {@code install}, so the local
 * Maven repository gets no artifact of the old build. Test JVMs side by side take turns through a
 * file lock.
 */
public record PinnedRelease(String version, String commit, Map<String, String> env) {
  /**
   * The release a rolling upgrade starts from: 0.2.0, the first named release (tag {@code v0.2.0}).
   * At each release, once its tag is pushed, move this to that release: its version, the commit the
   * tag names ({@code git rev-parse v<version>^{commit}}), and the settings its nodes need that the
   * harness gives under another name (none for 0.2.0: it reads every setting the harness gives
   * under the same name, and ignores the cluster link settings it does not have).
   */
  public static final PinnedRelease PREVIOUS =
      new PinnedRelease("0.2.0", "55f421c7803ca6c71e0e39521ed92bd0e5e2c3ae", Map.of());

  private static final Duration GIT_DEADLINE = Duration.ofMinutes(2);
  private static final Duration MAVEN_DEADLINE = Duration.ofMinutes(15);
  private static final List<String> MAVEN = List.of("mvn", "-B", "-q", "-DskipTests", "package", "-pl", "cluster-config", "-am");

  /**
   * Why this release cannot be built here, or null if it can: its jar is kept already, or its
   * commit is in the repository's history (a shallow clone may not have it).
   */
  public String unavailable(HarnessConfig config) {
    if (Files.isRegularFile(config.builds().resolve(commit).resolve("relay.jar"))) {
      return null;
    }
    Path repository = config.repository().toAbsolutePath().normalize();
    try {
      Process git = new ProcessBuilder("git", "-C", repository.toString(), "cat-file", "-e", commit + "^{commit}").redirectErrorStream(true).start();
      git.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
      if (git.waitFor(GIT_DEADLINE.toSeconds(), java.util.concurrent.TimeUnit.SECONDS) && git.exitValue() == 0) {
        return null;
      }
      git.destroyForcibly();
    } catch (IOException e) {
      return "git cannot be run here (" + e.getMessage() + "), and release " + version + " is built from this repository's history";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    return "commit " + commit + " (release " + version + ") is not in the history of " + repository
        + " (a shallow clone?): fetch the full history (git fetch --unshallow origin) to run the upgrade from it";
  }

  /** Its node build, its jar built first unless one is kept for its commit. */
  public NodeBuild build(HarnessConfig config) {
    Path dir = config.builds().resolve(commit);
    Path jar = dir.resolve("relay.jar");
    try {
      Files.createDirectories(dir);
      try (FileChannel lockFile = FileChannel.open(dir.resolve("build.lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          FileLock lock = lockFile.lock()) {
        if (!Files.isRegularFile(jar)) {
          make(config, dir, jar);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot build release " + version + " into " + dir, e);
    }
    return new NodeBuild(version, jar, env);
  }

  private void make(HarnessConfig config, Path dir, Path jar) throws IOException {
    Path repository = config.repository().toAbsolutePath().normalize();
    Path log = dir.resolve("build.log");
    Files.deleteIfExists(log);
    if (run(List.of("git", "-C", repository.toString(), "cat-file", "-e", commit + "^{commit}"), repository, log, GIT_DEADLINE) != 0) {
      throw new IllegalStateException(
          "commit " + commit + " (release " + version + ") is not in the history of " + repository
              + ": the harness builds that release from it; fetch the full history (git fetch --unshallow origin)");
    }
    Path source = dir.resolve("source");
    delete(source);
    Files.createDirectories(source);
    Path tar = dir.resolve("source.tar");
    try {
      check(run(List.of("git", "-C", repository.toString(), "archive", "--format=tar", "-o", tar.toString(), commit), repository, log, GIT_DEADLINE), "git archive", log);
      check(run(List.of("tar", "-xf", tar.toString(), "-C", source.toString()), source, log, GIT_DEADLINE), "tar -x", log);
      List<String> offline = new ArrayList<>(MAVEN);
      offline.add(1, "-o");
      if (run(offline, source, log, MAVEN_DEADLINE) != 0) {
        System.out.println("building release " + version + " offline failed (see " + log + "): building it online");
        check(run(MAVEN, source, log, MAVEN_DEADLINE), String.join(" ", MAVEN), log);
      }
      Path part = dir.resolve("relay.jar.part");
      Files.copy(source.resolve("cluster-config/target/relay.jar"), part, StandardCopyOption.REPLACE_EXISTING);
      Files.move(part, jar, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(tar);
      delete(source);
    }
  }

  /** Runs {@code command} in {@code dir}, its output appended to {@code log}; its exit status. */
  private static int run(List<String> command, Path dir, Path log, Duration deadline) throws IOException {
    Files.writeString(log, "$ " + String.join(" ", command) + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    Process process =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    try {
      if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not finish within " + deadline + " (log: " + log + ")");
      }
      return process.exitValue();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static void check(int status, String what, Path log) throws IOException {
    if (status != 0) {
      List<String> lines = Files.readAllLines(log);
      throw new IllegalStateException(
          what + " failed with status " + status + "; the last lines of " + log + ":\n  "
              + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 25), lines.size())));
    }
  }

  private static void delete(Path tree) throws IOException {
    if (!Files.exists(tree)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(tree)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    }
  }
}
