package io.relay.node;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.management.javadsl.ManagementRouteProvider;
import org.apache.pekko.management.javadsl.ManagementRouteProviderSettings;

/**
 * Serves the node's Prometheus metrics at {@code /metrics} on the management port: the node's own
 * ({@code relay_*}) and its JVM's and process's ({@code jvm_*}, {@code process_*}: heap, garbage
 * collections, threads, direct buffers, CPU, resident memory, open file descriptors against their
 * limit), read on every scrape.
 */
public final class MetricsRoute extends AllDirectives implements ManagementRouteProvider {
  private static final ContentType CONTENT_TYPE =
      ContentTypes.parse("text/plain; version=0.0.4; charset=utf-8");

  /** The JVM's metrics: one set per JVM, shared by the nodes a test may run in one. */
  private static final PrometheusRegistry JVM = jvmRegistry();

  private final NodeState state;
  private final PrometheusTextFormatWriter writer = PrometheusTextFormatWriter.create();

  public MetricsRoute(ExtendedActorSystem system) {
    this.state = NodeState.get(Adapter.toTyped(system));
  }

  @Override
  public Route routes(ManagementRouteProviderSettings settings) {
    return path("metrics", () -> get(() -> complete(scrape())));
  }

  private HttpResponse scrape() {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    try {
      writer.write(body, scrapeAll());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return HttpResponse.create().withEntity(CONTENT_TYPE, body.toByteArray());
  }

  private MetricSnapshots scrapeAll() {
    MetricSnapshots.Builder all = MetricSnapshots.builder();
    state.metrics().registry().scrape().forEach(all::metricSnapshot);
    JVM.scrape().forEach(all::metricSnapshot);
    return all.build();
  }

  private static PrometheusRegistry jvmRegistry() {
    PrometheusRegistry registry = new PrometheusRegistry();
    JvmMetrics.builder().register(registry);
    return registry;
  }
}
