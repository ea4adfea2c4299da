package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No log written by the suite's nodes holds a token or a code: the in-process nodes of the
 * cluster-config tests (their captured output), the packaged jar's runs, and the harness nodes.
 * Each harness scenario also checks its own nodes' logs when it ends.
 *
 * <p>The proxies' own logs are not the relay's and are left out: nginx writes the full request
 * line, query included, into its error log and cannot be told not to (deploy/README.md says what
 * that means for one-time codes).
 */
class LogHygieneIT {
  private final HarnessConfig config = HarnessConfig.fromSystemProperties();

  @Test
  void noLogOfTheSuiteHoldsATokenOrACode() throws IOException {
    Path clusterConfig = config.jar().toAbsolutePath().getParent();
    List<Path> logs =
        Stream.of(
                clusterConfig.resolve("surefire-reports"),
                clusterConfig.resolve("failsafe-reports"),
                clusterConfig.resolve("relay-logs"),
                config.workDir())
            .filter(Files::isDirectory)
            .flatMap(LogHygieneIT::files)
            .filter(p -> !p.getParent().equals(config.workDir()) || p.getFileName().toString().startsWith("node"))
            .filter(p -> p.getParent().equals(config.workDir()) || !p.startsWith(config.workDir()))
            .filter(p -> p.toString().endsWith("-output.txt") || p.toString().endsWith(".log"))
            .toList();
    assertTrue(logs.stream().anyMatch(p -> p.toString().endsWith("-output.txt")), "the node tests' output was captured: " + clusterConfig);
    LogHygiene.assertClean(logs);
    System.out.printf("scanned %d log files%n", logs.size());
  }

  private static Stream<Path> files(Path dir) {
    try {
      return Files.walk(dir).filter(Files::isRegularFile).toList().stream();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
