package io.relay.harness;

import java.nio.file.Path;
import java.util.Map;

/**
 * A build of the node the harness starts: its jar, and the RELAY_* settings its nodes get on top of
 * the cluster's (a setting an earlier release names otherwise, say).
 *
 * @param name what reports and failure messages call it ({@code current}, {@code 0.2.0})
 */
public record NodeBuild(String name, Path jar, Map<String, String> env) {
  /** This checkout's build ({@code cluster-config/target/relay.jar}), with no settings of its own. */
  public static NodeBuild current(HarnessConfig config) {
    return new NodeBuild("current", config.jar(), Map.of());
  }
}
