package io.relay.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A short command the harness runs to its end ({@code ip}, {@code nft}, {@code nginx -t},
 * {@code jcmd}): its exit status and its output, standard error included. Its output is read on a
 * thread of its own, so that a command that hangs is killed at its deadline rather than holding
 * the read past it.
 */
public record Command(int exit, String output) {
  /**
   * Runs {@code command}, giving it {@code input} (or nothing) on its standard input.
   *
   * @throws IllegalStateException if it has not ended by {@code deadline} (it is killed then)
   * @throws UncheckedIOException if it cannot be started
   */
  public static Command run(List<String> command, String input, Duration deadline) {
    Process process;
    try {
      process = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command.get(0), e);
    }
    FutureTask<String> output =
        new FutureTask<>(() -> new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    Thread reader = new Thread(output, "output of " + command.get(0) + " " + process.pid());
    reader.setDaemon(true);
    reader.start();
    try {
      try (var stdin = process.getOutputStream()) {
        if (input != null) {
          stdin.write(input.getBytes(StandardCharsets.UTF_8));
        }
      }
      if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not finish within " + deadline.toSeconds() + " s");
      }
      return new Command(process.exitValue(), output.get(10, TimeUnit.SECONDS));
    } catch (IOException e) {
      process.destroyForcibly();
      throw new UncheckedIOException("cannot give " + command.get(0) + " its input", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot read the output of " + String.join(" ", command), e);
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
