package io.relay.metrics;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.prometheus.metrics.core.metrics.Counter;
import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.util.function.LongSupplier;

/** The node's Prometheus metrics; one instance per node, created by its guardian. */
public final class RelayMetrics {
  private final PrometheusRegistry registry = new PrometheusRegistry();

  public final Counter framesIn = counter("relay_frames_in", "Messages received from connections");
  public final Counter bytesIn = counter("relay_bytes_in", "Payload bytes received from connections");
  public final Counter framesOut = counter("relay_frames_out", "Messages sent to connections");
  public final Counter bytesOut = counter("relay_bytes_out", "Payload bytes sent to connections");
  public final Counter connectionsIdle =
      counter("relay_connections_idle", "WebSocket connections cut off after relay.idle-timeout without a byte from the client");
  public final Counter framesDropped =
      counter(
          "relay_frames_dropped",
          "Messages dropped from outbound queues: full (slow readers), shed, or not sent within relay.close-timeout of a close");
  public final Counter framesDiscarded =
      labelled(
          "relay_frames_discarded",
          "Messages a close let go, by side: not sent to a reader because its close was asked or its connection ended (reader, per reader), or sent by a writer once its own close had begun (writer, not relayed)",
          "side",
          "reader", "writer");
  /** {@link #framesDiscarded}'s two sides, each looked up once. */
  public final CounterDataPoint readerFramesDiscarded = framesDiscarded.labelValues("reader");
  public final CounterDataPoint writerFramesDiscarded = framesDiscarded.labelValues("writer");
  public final Counter closeTimeouts =
      counter("relay_close_timeouts", "WebSocket connections reset because the client did not finish the close handshake within relay.close-timeout");
  public final Counter framesRefused =
      counter("relay_frames_refused", "Messages from connections without write scope, not relayed");
  public final Counter connectionsOpened =
      counter("relay_connections_opened", "WebSocket connections accepted");
  public final Counter connectionsClosed =
      labelled(
          "relay_connections_closed",
          "WebSocket connections closed, by close code",
          "code",
          "client", "1001", "1002", "1007", "1009", "1011", "1013", "4000", "4001", "4003");
  public final Counter codesIssued = counter("relay_codes_issued", "One-time codes issued");
  public final Counter codesRefused =
      labelled(
          "relay_codes_refused",
          "Relay requests refused before the upgrade, by reason",
          "reason",
          "missing", "unknown", "used", "expired", "wrong_topic", "issuer_gone", "token_expired", "denied", "unavailable");
  public final Counter codeLookups =
      labelled(
          "relay_code_lookups",
          "Codes presented to this node, by where it found what they grant: in its replica, or from their issuer because gossip had not brought them yet",
          "found",
          "replica", "issuer");
  public final Counter denies = counter("relay_denies", "Bookings denied through the access API");
  public final Counter allows = counter("relay_allows", "Bookings allowed through the access API");
  public final Counter denyUnconfirmed =
      counter(
          "relay_deny_unconfirmed",
          "Denies and allows stored on a majority but answered 503 because a reachable node did not confirm applying them in time");
  public final Counter claims = counter("relay_claims", "Topic claims this node made (first connection of a topic)");
  public final Counter evictions =
      counter("relay_evictions", "Topics this node gave up to a newer claim (connections closed with 4001)");
  public final Counter topicFaults =
      counter(
          "relay_topic_faults",
          "Faults in the node's topic actors (bugs, logged at ERROR): a join one could not complete (refused with 500), or one failing (its connections closed with 1011, the topic served again by a new actor)");
  public final Counter flapping =
      counter("relay_flapping", "Evictions of a topic evicted shortly before: a lasting ring disagreement");
  public final Counter connectionsShed =
      counter(
          "relay_connections_shed",
          "Connections closed with 1013 to keep the node within its memory budget: the biggest holders shed, and writers whose next message had no room");
  public final Counter admissionsRefused =
      counter("relay_admissions_refused", "Code requests and upgrades refused with 503 because max-admissions-in-flight were being worked on");
  public final Counter tokensCached =
      counter("relay_tokens_cached", "Access tokens accepted as verified before, without checking their signature again");
  public final Counter holdDownRefusals =
      counter("relay_holddown_refusals", "Connections refused with 503 while their topic was held down");
  public final Counter limitRefusals =
      labelled(
          "relay_limit_refusals",
          "Requests refused at a documented limit: booking id length, deny exp range, deny list capacity, topic length, a token's scopes",
          "limit",
          "booking_id_length", "deny_exp", "deny_capacity", "topic_length", "scopes");
  public final Counter requestTimeouts =
      counter(
          "relay_request_timeouts",
          "Requests answered 503 because what they waited for did not answer in time: the node's actors (relay.ask-timeout), a deny's confirmations, a /status gather");
  public final Counter writesFailed =
      labelled(
          "relay_writes_failed",
          "Code requests and denies or allows answered 503 because their write failed: a deny's or an allow's majority write within relay.replication-timeout, a code's write to this node's replica",
          "what",
          "code", "deny");
  public final Counter unreadRefusals =
      labelled(
          "relay_deny_list_unread_refusals",
          "Requests refused with 503 because this node has not read the deny list from a majority, by API",
          "api",
          "session", "relay", "bids");

  private Counter counter(String name, String help) {
    return Counter.builder().name(name).help(help).register(registry);
  }

  /**
   * A counter with one label, every value of which exists from the start, so dashboards and alerts
   * see zeros, not gaps.
   */
  private Counter labelled(String name, String help, String label, String... values) {
    Counter counter = Counter.builder().name(name).help(help).labelNames(label).register(registry);
    for (String value : values) {
      counter.initLabelValues(value);
    }
    return counter;
  }

  /** Registers a counter kept elsewhere, read on every scrape. */
  public void counter(String name, String help, LongSupplier value) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .callback(callback -> callback.call(value.getAsLong()))
        .register(registry);
  }

  /** Registers a counter of seconds kept elsewhere in nanoseconds, read on every scrape. */
  public void secondsCounter(String name, String help, LongSupplier nanos) {
    CounterWithCallback.builder()
        .name(name)
        .help(help)
        .callback(callback -> callback.call(nanos.getAsLong() / 1e9))
        .register(registry);
  }

  /** Registers a gauge read on every scrape. */
  public void gauge(String name, String help, LongSupplier value) {
    GaugeWithCallback.builder()
        .name(name)
        .help(help)
        .callback(callback -> callback.call(value.getAsLong()))
        .register(registry);
  }

  /** Registers a histogram of seconds, its buckets' upper bounds {@code bounds}. */
  public Histogram secondsHistogram(String name, String help, double... bounds) {
    return Histogram.builder().name(name).help(help).classicOnly().classicUpperBounds(bounds).register(registry);
  }

  /** Registers an info metric ({@code <name>_info}, always 1) whose one label carries {@code value}. */
  public void info(String name, String help, String label, String value) {
    Info.builder().name(name).help(help).labelNames(label).register(registry).setLabelValues(value);
  }

  public PrometheusRegistry registry() {
    return registry;
  }
}
