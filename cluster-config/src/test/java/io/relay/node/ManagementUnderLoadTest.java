package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relay.http.socket.ClientStreams;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The management port answers while the dispatcher of the node's connections is saturated (a
 * storm, a flood beyond saturation): readiness probes and Prometheus must not fail exactly when
 * the node is busiest. Here every thread of the connections' dispatcher ({@link ClientStreams}) is
 * held busy, and {@code /ready} and {@code /metrics} must still answer at once.
 */
class ManagementUnderLoadTest {
  private TestNode node;
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stop() {
    release.countDown();
    if (node != null) {
      node.close();
    }
  }

  @Test
  void readyAndMetricsAnswerWhileTheConnectionsDispatcherIsSaturated() throws Exception {
    node = TestNode.start();
    com.typesafe.config.Config pool = node.system.settings().config().getConfig(ClientStreams.DISPATCHER + ".fork-join-executor");
    int threads =
        Math.min(pool.getInt("parallelism-max"),
            Math.max(pool.getInt("parallelism-min"), (int) Math.ceil(Runtime.getRuntime().availableProcessors() * pool.getDouble("parallelism-factor"))));
    Executor connections = node.system.dispatchers().lookup(DispatcherSelector.fromConfig(ClientStreams.DISPATCHER));
    CountDownLatch busy = new CountDownLatch(threads);
    for (int i = 0; i < threads; i++) {
      connections.execute(() -> {
        busy.countDown();
        try {
          release.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    assertEquals(true, busy.await(10, TimeUnit.SECONDS), "every thread of the connections' dispatcher is held");

    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    for (String path : new String[] {"/ready", "/metrics"}) {
      HttpResponse<String> answer =
          http.send(HttpRequest.newBuilder(node.management(path)).timeout(Duration.ofSeconds(3)).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, answer.statusCode(), path + " answers while the connections' dispatcher is busy");
    }
  }
}
