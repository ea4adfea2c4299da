package io.relay.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A process the harness started: its log, its pid, and signals sent to it by pid.
 *
 * @param log where its output goes
 */
public record ManagedProcess(String name, Process process, Path log) implements AutoCloseable {
  private static final int START_FAILURE_LINES = 25;

  /**
   * Starts {@code command} with extra environment variables, its output going to {@code log} (whose
   * directory is made if missing).
   */
  public static ManagedProcess start(String name, List<String> command, Map<String, String> env, Path log) {
    try {
      Files.createDirectories(log.toAbsolutePath().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make the directory of " + log, e);
    }
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(key -> key.startsWith("RELAY_"));
    builder.environment().putAll(env);
    try {
      Process process = builder.start();
      // even if the test JVM is stopped before close(), nothing it started outlives it
      Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "kill-" + name + "-" + process.pid()));
      return new ManagedProcess(name, process, log);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + name + " (" + command.get(0) + ")", e);
    }
  }

  public long pid() {
    return process.pid();
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  /** Sends a signal by pid, for example HUP or USR2 to reload a proxy. */
  public void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-s", signal, String.valueOf(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -s " + signal + " " + name + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGTERM. */
  public void terminate() {
    process.destroy();
  }

  /** SIGKILL. */
  public void kill() {
    process.destroyForcibly();
  }

  /** Completes when the process has exited. */
  public CompletableFuture<Process> onExit() {
    return process.onExit();
  }

  /** Waits for the process to exit; returns its exit status. */
  public int awaitExit(Duration timeout) {
    try {
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new AssertionError(name + " did not exit within " + timeout + " (log: " + log + ")");
      }
      return process.exitValue();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Why the process did not come up, for a test's failure message: its exit status if it exited,
   * and the last lines of its log (a CI run keeps only the test report, not the log file).
   */
  public String startFailure() {
    String state = process.isAlive() ? name + " is running" : name + " exited with status " + process.exitValue();
    List<String> lines;
    try {
      lines = Files.readAllLines(log);
    } catch (IOException | UncheckedIOException e) {
      return state + "; its log " + log + " cannot be read: " + e;
    }
    List<String> tail = lines.subList(Math.max(0, lines.size() - START_FAILURE_LINES), lines.size());
    return state + "; the last lines of " + log + ":\n  " + String.join("\n  ", tail);
  }

  /** Kills the process (and what it started) if it still runs. */
  @Override
  public void close() {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    if (process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
