package io.relay.harness;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the harness finds the node jar and proxy templates and where it writes: set by Maven
 * Failsafe as system properties, with defaults for running from the project root.
 */
public record HarnessConfig(Path jar, Path proxyTemplates, Path workDir, Path reportDir) {
  public static HarnessConfig fromSystemProperties() {
    HarnessConfig config =
        new HarnessConfig(
            Path.of(System.getProperty("relay.jar", "cluster-config/target/relay.jar")),
            Path.of(System.getProperty("relay.proxy.templates", "deploy/proxy")),
            Path.of(System.getProperty("relay.harness.work", "multi-jvm-tests/target/harness")),
            Path.of(System.getProperty("relay.report.dir", "multi-jvm-tests/target")));
    if (!Files.isRegularFile(config.jar())) {
      throw new IllegalStateException(
          "the node jar " + config.jar().toAbsolutePath() + " does not exist: build it with mvn -DskipTests package");
    }
    return config;
  }
}
