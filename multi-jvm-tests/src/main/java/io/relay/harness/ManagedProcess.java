package io.relay.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A process the harness started: its log, its pid, and signals sent to it by pid.
 *
 * @param log where its output goes
 */
public record ManagedProcess(String name, Process process, Path log) implements AutoCloseable {
  /** The shutdown hook of each process still running, removed once it is closed. */
  private static final Map<Process, Thread> HOOKS = new ConcurrentHashMap<>();

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
      Thread hook = new Thread(() -> kill(process), "kill-" + name + "-" + process.pid());
      Runtime.getRuntime().addShutdownHook(hook);
      HOOKS.put(process, hook);
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
    kill(process);
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Thread hook = HOOKS.remove(process);
    if (hook != null) {
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs anyway, and finds nothing left to kill
      }
    }
  }

  /**
   * Kills the process, then every process it had started: the parent first, so that a master
   * (nginx's) cannot start a worker again after its workers were killed.
   */
  private static void kill(Process process) {
    List<ProcessHandle> started = process.descendants().toList();
    process.destroyForcibly();
    started.forEach(ProcessHandle::destroyForcibly);
  }

  @Override
  public String toString() {
    return name + " (pid " + process.pid() + ")";
  }
}
