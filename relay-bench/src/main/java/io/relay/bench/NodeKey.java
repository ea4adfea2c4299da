package io.relay.bench;

import picocli.CommandLine.Option;

/** The key a relay node checks tokens against and the audience it requires: the generator's commands' options for them. */
final class NodeKey {
  @Option(names = "--secret", defaultValue = "${env:RELAY_SECRET}", description = "HS256 key of the node (default: RELAY_SECRET, else the development key).")
  String secret;

  @Option(names = "--audience", defaultValue = "${env:RELAY_AUDIENCE:-http://127.0.0.1:3000}", description = "aud claim (default: RELAY_AUDIENCE or ${DEFAULT-VALUE}).")
  String audience;

  /** The key to sign with: the secret given, else the node's development key. */
  String secret() {
    return secret == null || secret.isEmpty() ? BenchCommand.DEV_SECRET : secret;
  }
}
