package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The memory attacks against the packaged jar with a small heap, as an attacker would run them:
 * readers that never read joining a topic one after another while a writer sends 10 MiB
 * messages, and writers that stop in the middle of 10 MiB messages. The node must stay alive and
 * ready, keep its heap under its maximum, shed what it must (counted), and keep another topic's
 * participants exchanging messages; the figures are printed.
 *
 * <p>In {@code mvn -B verify} it runs at CI size (a 256 MiB heap, 24 attackers); {@code
 * -Dattack.scale=full} runs the attack suite's full size (a 512 MiB heap, 200 attackers), see
 * docs/limits.md.
 */
class MemoryAttackIT {
  private static final Path JAR = Path.of("target", "relay.jar");
  private static final Path LOGS = Path.of("target", "relay-logs");
  private static final String SECRET = "attack-secret-0123456789abcdef-0123456789";
  private static final int MESSAGE = 10 << 20;
  private static final boolean FULL = "full".equals(System.getProperty("attack.scale"));
  private static final String HEAP = FULL ? "512m" : "256m";
  private static final int ATTACKERS = FULL ? 200 : 24;

  private final HttpClient http = HttpClient.newHttpClient();
  private final ExecutorService threads = Executors.newCachedThreadPool();
  private final List<RawWebSocket> sockets = new ArrayList<>();
  private Process node;
  private int access;
  private int relay;
  private int management;

  @AfterEach
  void stop() throws Exception {
    threads.shutdownNow();
    for (RawWebSocket socket : sockets) {
      socket.close();
    }
    if (node != null) {
      node.destroyForcibly();
      node.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private Path start() throws IOException {
    Files.createDirectories(LOGS);
    Path log = Files.createTempFile(LOGS, "relay-attack", ".log");
    access = TestNode.freePort();
    relay = TestNode.freePort();
    management = TestNode.freePort();
    ProcessBuilder builder =
        new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"), "-Xmx" + HEAP, "-jar", JAR.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(k -> k.startsWith("RELAY_"));
    builder.environment()
        .putAll(
            Map.of(
                "RELAY_SECRET", SECRET,
                "RELAY_PORT_ACCESS", String.valueOf(access),
                "RELAY_PORT_RELAY", String.valueOf(relay),
                "RELAY_PORT_MANAGEMENT", String.valueOf(management),
                "RELAY_PORT_REMOTE", String.valueOf(TestNode.freePort()),
                "RELAY_URL", "ws://127.0.0.1:" + relay));
    node = builder.start();
    Waits.await("the node is ready (log: " + log + ")", Duration.ofSeconds(60), () -> status("/ready") == 200);
    return log;
  }

  @Test
  void readersThatNeverRead() throws Exception {
    Path log = start();
    try (Watch watch = new Watch(); QuietTopic quiet = new QuietTopic("attack/quiet-readers")) {
      RawWebSocket writer = open("attack/stalled", "write");
      AtomicBoolean writing = new AtomicBoolean(true);
      Future<?> frames =
          threads.submit(
              () -> {
                byte[] payload = new byte[MESSAGE];
                while (writing.get()) {
                  writer.send(RawWebSocket.BINARY, true, payload);
                }
                return null;
              });
      for (int i = 0; i < ATTACKERS; i++) {
        sockets.add(RawWebSocket.connectWithReceiveBuffer(uri("attack/stalled", "read"), 4096));
      }
      Waits.await("readers are shed", Duration.ofSeconds(60), () -> metric("relay_connections_shed_total") > 0);
      writing.set(false);
      frames.cancel(true);
      report("readers that never read", watch, quiet, log);
    }
  }

  @Test
  void writersStoppedInTheMiddleOfMessages() throws Exception {
    Path log = start();
    try (Watch watch = new Watch(); QuietTopic quiet = new QuietTopic("attack/quiet-writers")) {
      byte[] frame = RawWebSocket.frame(RawWebSocket.BINARY, true, new byte[MESSAGE]);
      byte[] almostAll = Arrays.copyOf(frame, frame.length - MESSAGE / 20);
      for (int i = 0; i < ATTACKERS; i++) {
        RawWebSocket writer = open("attack/partial-" + i, "read", "write");
        sockets.add(writer);
        try {
          writer.sendRaw(almostAll);
        } catch (IOException shedWhileSending) {
          // shed before it was done sending
        }
      }
      Waits.await("writers are shed", Duration.ofSeconds(60), () -> metric("relay_connections_shed_total") > 0);
      report("writers stopped inside messages", watch, quiet, log);
    }
  }

  private void report(String attack, Watch watch, QuietTopic quiet, Path log) throws Exception {
    long[] latencies = quiet.stop();
    watch.close();
    double shed = metric("relay_connections_shed_total");
    double heapMax = metric("relay_jvm_heap_max_bytes");
    System.out.printf(
        "attack: %s x %d (-Xmx%s, 10 MiB messages): node alive %s, ready throughout %s (slowest /ready %d ms), heap peak %.0f MiB of %.0f, "
            + "held peak %.0f MiB of a %.0f MiB budget, %.0f connections shed; quiet topic: %d messages, p50 %.1f ms, p99 %.1f ms%n",
        attack, ATTACKERS, HEAP, node.isAlive(), !watch.unready.get(), watch.slowestReady.get() / 1_000_000, watch.heapPeak.get() / 1048576.0, heapMax / 1048576.0,
        watch.heldPeak.get() / 1048576.0, metric("relay_memory_budget_bytes") / 1048576.0, shed, latencies.length,
        percentile(latencies, 50) / 1e6, percentile(latencies, 99) / 1e6);
    assertTrue(node.isAlive(), "the node survived (log: " + log + ")");
    assertTrue(!watch.unready.get(), "the node stayed ready; /ready answered:" + watch.unreadyAnswers + " (log: " + log + ")");
    assertTrue(watch.heapPeak.get() < heapMax, "the heap stayed under its maximum");
    assertTrue(latencies.length > 0, "the quiet topic's participants exchanged messages during the attack");
    assertTrue(shed > 0, "what was shed is counted");
  }

  private static double percentile(long[] sorted, int p) {
    return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
  }

  /** Samples the node's readiness, heap and held bytes every 100 ms until closed. */
  private final class Watch implements AutoCloseable {
    final AtomicLong heapPeak = new AtomicLong();
    final AtomicLong heldPeak = new AtomicLong();
    final AtomicBoolean unready = new AtomicBoolean();
    final StringBuilder unreadyAnswers = new StringBuilder();
    final AtomicLong slowestReady = new AtomicLong();
    final long started = System.nanoTime();
    final ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();

    Watch() {
      sampler.scheduleAtFixedRate(this::sample, 0, 100, TimeUnit.MILLISECONDS);
    }

    private void sample() {
      heapPeak.accumulateAndGet((long) metric("relay_jvm_heap_used_bytes"), Math::max);
      heldPeak.accumulateAndGet((long) metric("relay_memory_held_bytes"), Math::max);
      long asked = System.nanoTime();
      int status = status("/ready");
      slowestReady.accumulateAndGet(System.nanoTime() - asked, Math::max);
      if (status != 200) {
        unready.set(true);
        synchronized (unreadyAnswers) {
          unreadyAnswers.append(
              String.format(
                  " [%d after %d ms at %.1f s]",
                  status, (System.nanoTime() - asked) / 1_000_000, (asked - started) / 1e9));
        }
      }
    }

    @Override
    public void close() throws InterruptedException {
      // no interrupt: an interrupted sample would read as a node that did not answer
      sampler.shutdown();
      assertTrue(sampler.awaitTermination(30, TimeUnit.SECONDS), "the last sample of the node finished within 30 s");
    }
  }

  /** Two participants of another topic passing a message back and forth; the latencies. */
  private final class QuietTopic implements AutoCloseable {
    final AtomicBoolean running = new AtomicBoolean(true);
    final List<Long> latencies = new ArrayList<>();
    final Future<?> task;

    QuietTopic(String topic) {
      task =
          threads.submit(
              () -> {
                try (Participant a = Participant.connect(uri(topic, "read", "write"));
                    Participant b = Participant.connect(uri(topic, "read", "write"))) {
                  for (int i = 0; running.get(); i++) {
                    long sent = System.nanoTime();
                    a.sendText("m" + i);
                    b.next();
                    synchronized (latencies) {
                      latencies.add(System.nanoTime() - sent);
                    }
                  }
                }
                return null;
              });
    }

    long[] stop() throws Exception {
      running.set(false);
      task.get(30, TimeUnit.SECONDS);
      synchronized (latencies) {
        return latencies.stream().mapToLong(Long::longValue).sorted().toArray();
      }
    }

    @Override
    public void close() {
      running.set(false);
    }
  }

  private RawWebSocket open(String topic, String... scopes) throws IOException {
    RawWebSocket socket = RawWebSocket.connect(uri(topic, scopes));
    sockets.add(socket);
    return socket;
  }

  private String uri(String topic, String... scopes) throws IOException {
    String token = Tokens.sign(Tokens.session(topic, List.of(scopes), "b-" + topic.replace('/', '-')).audience("http://127.0.0.1:3000").build(), SECRET);
    HttpResponse<String> response;
    try {
      response =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + access + "/session/" + topic))
                  .header("Authorization", token)
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    if (response.statusCode() != 200) {
      throw new AssertionError("no code for " + topic + ": " + response.statusCode() + " " + response.body());
    }
    return response.body().replaceAll(".*\"uri\":\"([^\"]+)\".*", "$1");
  }

  private int status(String path) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + path)).timeout(Duration.ofSeconds(5)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  /** One sample from the node's /metrics; -1 when the node does not answer. */
  private double metric(String sample) {
    String body;
    try {
      body =
          http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + management + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
    for (String line : body.split("\n")) {
      if (line.startsWith(sample + " ")) {
        return Double.parseDouble(line.substring(sample.length() + 1).trim());
      }
    }
    throw new AssertionError("no sample " + sample + " in /metrics");
  }
}
