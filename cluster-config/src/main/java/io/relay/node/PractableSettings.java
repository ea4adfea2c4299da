package io.relay.node;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;

/**
 * The practable relay's serve settings that this relay does not read, and what to use instead:
 * a node started with any of them set names them in one warning, never with their values. The
 * settings practable shares with this relay (RELAY_SECRET, RELAY_AUDIENCE, RELAY_URL, the ports,
 * RELAY_BUFFER_SIZE, RELAY_STATS_EVERY, RELAY_ALLOW_NO_BOOKING_ID, RELAY_LOG_FORMAT) are read as
 * this relay's own (docs/practable.md).
 */
final class PractableSettings {

  /** A practable variable this relay ignores, and what to do instead. */
  record Ignored(String name, String instead) {}

  /**
   * practable's {@code relay serve} variables (its cmd/relay/cmd/serve.go), then the names its
   * older docs and scripts use (cmd/relay/README.md, docker-up.sh), which it no longer reads.
   */
  static final List<Ignored> IGNORED =
      List.of(
          new Ignored("RELAY_LOG_LEVEL", "the node logs at INFO; filter by level where its logs are collected"),
          new Ignored("RELAY_LOG_FILE", "the node logs to standard output; redirect it or let systemd or Kubernetes collect it"),
          new Ignored("RELAY_PROFILE", "no pprof: metrics are at /metrics on RELAY_PORT_MANAGEMENT, profiles with JDK Flight Recorder"),
          new Ignored("RELAY_PORT_PROFILE", "no pprof: metrics are at /metrics on RELAY_PORT_MANAGEMENT, profiles with JDK Flight Recorder"),
          new Ignored("RELAY_TIDY_EVERY", "RELAY_DENY_SWEEP_INTERVAL for expired deny and allow entries, RELAY_CODE_SWEEP_INTERVAL for codes"),
          new Ignored("RELAY_ACCESSPORT", "RELAY_PORT_ACCESS"),
          new Ignored("RELAY_RELAYPORT", "RELAY_PORT_RELAY"),
          new Ignored("RELAY_ACCESSFQDN", "RELAY_AUDIENCE"),
          new Ignored("RELAY_RELAYFQDN", "RELAY_URL"),
          new Ignored("RELAY_ALLOWNOBOOKINGID", "RELAY_ALLOW_NO_BOOKING_ID"),
          new Ignored("RELAY_PRUNEEVERY", "RELAY_DENY_SWEEP_INTERVAL"),
          new Ignored("RELAY_DEVELOPMENT", "leave RELAY_SECRET unset for development mode"));

  private PractableSettings() {}

  /** The ignored variables set (not empty) in {@code environment}, in {@link #IGNORED}'s order. */
  static List<Ignored> found(Map<String, String> environment) {
    return IGNORED.stream()
        .filter(ignored -> {
          String value = environment.get(ignored.name());
          return value != null && !value.isEmpty();
        })
        .toList();
  }

  /** Logs one warning naming each ignored variable set, or nothing when none is. */
  static void warn(Logger log, List<Ignored> found) {
    if (found.isEmpty()) {
      return;
    }
    String each = found.stream().map(i -> i.name() + " (" + i.instead() + ")").collect(Collectors.joining("; "));
    log.warn("practable relay settings are set that this relay ignores: {}. See docs/practable.md", each);
  }
}
