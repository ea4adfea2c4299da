package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.Await;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class EventLoopDelayTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  private final RelayMetrics metrics = new RelayMetrics();

  @AfterEach
  void stop() {
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
  }

  @Test
  void aLoopKeptBusyShowsAsADelayAsLongAsItWasBusy() {
    EventLoop loop = group.next();
    EventLoopDelay.watch(
        List.of(loop), metrics.secondsHistogram("relay_event_loop_delay_seconds", "delays", 0.01, 0.1, 0.25, 1));
    Await.until("the probe runs", WAIT, () -> sample(exposition(), "relay_event_loop_delay_seconds_count") >= 5, this::exposition);
    double lateBefore = late();
    double sumBefore = sample(exposition(), "relay_event_loop_delay_seconds_sum");

    // a task that keeps the loop's thread for 500 ms, as a long task or a lost core would
    loop.execute(() -> {
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
      while (System.nanoTime() < end) {
        Thread.onSpinWait();
      }
    });

    Await.until("a delay over 250 ms is observed", WAIT, () -> late() > lateBefore, this::exposition);
    assertTrue(sample(exposition(), "relay_event_loop_delay_seconds_sum") - sumBefore >= 0.3,
        "the probe due while the loop was busy waited at least 500 ms less a period: " + exposition());
  }

  /** Probes that ran more than 250 ms late, from one scrape. */
  private double late() {
    String exposition = exposition();
    return sample(exposition, "relay_event_loop_delay_seconds_count") - sample(exposition, "relay_event_loop_delay_seconds_bucket{le=\"0.25\"}");
  }

  private static double sample(String exposition, String name) {
    return exposition.lines()
        .filter(line -> line.startsWith(name + " "))
        .mapToDouble(line -> Double.parseDouble(line.substring(name.length() + 1)))
        .findFirst()
        .orElse(-1);
  }

  private String exposition() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      PrometheusTextFormatWriter.create().write(out, metrics.registry().scrape());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
