package io.relay.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where the harness finds the node jar and proxy templates and where it writes: set by Maven
 * Failsafe as system properties, with defaults for running from the project root.
 *
 * @param repository the git work tree of this project, whose history earlier releases are built from
 * @param builds where jars of earlier releases are kept between runs, one directory per commit
 * @param reportPage a page whose scenario report section is written from the report after every
 *     scenario ({@code -Dscenario.doc=docs/scenarios.md}, relative to the work tree), or none
 */
public record HarnessConfig(
    Path jar, Path proxyTemplates, Path workDir, Path reportDir, Path repository, Path builds, Optional<Path> reportPage) {
  public static HarnessConfig fromSystemProperties() {
    Path repository = Path.of(System.getProperty("relay.repository", "."));
    HarnessConfig config =
        new HarnessConfig(
            Path.of(System.getProperty("relay.jar", "cluster-config/target/relay.jar")),
            Path.of(System.getProperty("relay.proxy.templates", "deploy/proxy")),
            Path.of(System.getProperty("relay.harness.work", "multi-jvm-tests/target/harness")),
            Path.of(System.getProperty("relay.report.dir", "multi-jvm-tests/target")),
            repository,
            Path.of(System.getProperty("relay.harness.builds", System.getProperty("user.home") + "/.cache/relay-harness/builds")),
            Optional.ofNullable(System.getProperty("scenario.doc")).map(repository::resolve));
    if (!Files.isRegularFile(config.jar())) {
      throw new IllegalStateException(
          "the node jar " + config.jar().toAbsolutePath() + " does not exist: build it with mvn -DskipTests package");
    }
    return config;
  }

  /** The same, with nodes started from {@code otherJar} (a build of an earlier release). */
  public HarnessConfig withJar(Path otherJar) {
    return new HarnessConfig(otherJar, proxyTemplates, workDir, reportDir, repository, builds, reportPage);
  }
}
