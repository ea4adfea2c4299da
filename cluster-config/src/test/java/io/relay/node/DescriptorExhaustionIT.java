package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The packaged jar under a low file descriptor limit ({@code ulimit -n 1024}) and 1,100 idle
 * connections that never send a request: the node stops accepting at its connection limit (or,
 * when told to accept more than its descriptors allow, backs off from failing accepts without
 * flooding its log), closes the idle connections at the header timeout, and answers a client
 * that comes after them.
 */
class DescriptorExhaustionIT {
  private static final String SECRET = "fd-test-secret-0123456789abcdef-0123456789";
  private static final int DESCRIPTOR_LIMIT = 1024;
  private static final int IDLE_CONNECTIONS = 1_100;
  /** The log limiter's interval (10 s by default), short so that its count line comes soon. */
  private static final Duration LOG_LIMIT_INTERVAL = Duration.ofSeconds(2);

  private final List<Socket> idle = new ArrayList<>();
  private JarNode node;

  @AfterEach
  void stop() throws Exception {
    try {
      for (Socket socket : idle) {
        socket.close();
      }
    } finally {
      if (node != null) {
        node.close();
      }
    }
  }

  @Test
  void atTheConnectionLimitTheNodeStopsAcceptingAndServesAClientAfterTheIdleOnesTimeOut() throws Exception {
    start(Map.of());
    openIdleConnections(node.relay);
    assertAnswersAClient();
    Await.until(
        "the node reached its connection limit (relay_connection_limit_reached_total > 0)",
        Duration.ofSeconds(30),
        () -> node.metric("relay_connection_limit_reached_total") > 0);
    // the node may accept the client's connection before it has accepted enough idle ones to reach
    // its limit (the kernel holds both ports' queues), so the client can be served before the
    // header timeout; the idle ones are closed at the header timeout all the same
    Await.until(
        "idle connections closed at the header timeout (relay_header_timeouts_total > 0)",
        Duration.ofSeconds(30),
        () -> node.metric("relay_header_timeouts_total") > 0);
    assertTrue(node.metric("relay_max_connections") < DESCRIPTOR_LIMIT, "max-connections follows the descriptor limit");
    assertQuietLog();
  }

  @Test
  void whenAcceptsFailForWantOfDescriptorsTheNodeBacksOffAndLogsACount() throws Exception {
    start(Map.of("RELAY_MAX_CONNECTIONS", "100000", "RELAY_LOG_LIMIT_INTERVAL", LOG_LIMIT_INTERVAL.toSeconds() + "s"));
    long beforeFailures = System.nanoTime();
    openIdleConnections(node.relay);
    assertAnswersAClient();
    // the client can be served before the relay port's backlog has used up the descriptors
    Await.until("accepts failed for want of descriptors (relay_accept_failures_total > 0)", Duration.ofSeconds(30),
        () -> node.metric("relay_accept_failures_total") > 0);
    Await.until("the failing accepts are logged", Duration.ofSeconds(10), () -> failureLines() >= 1);
    Await.until("a line counts the failing accepts not logged (rate-limited, " + LOG_LIMIT_INTERVAL.toSeconds() + " s)", Duration.ofSeconds(30),
        () -> logLines("more lines like \"accepting connections on port") >= 1);
    long seconds = Duration.ofNanos(System.nanoTime() - beforeFailures).toSeconds();
    long failureLines = failureLines();
    // of a kind, one line and one count per interval
    assertTrue(failureLines <= 2 * (seconds / LOG_LIMIT_INTERVAL.toSeconds() + 1) + 1, failureLines + " lines about failing accepts in " + seconds + " s");
    assertQuietLog();
  }

  /** The node's log lines about failing accepts. */
  private long failureLines() {
    return logLines("accepting connections on port");
  }

  private long logLines(String holding) {
    try {
      return Files.readAllLines(node.log()).stream().filter(l -> l.contains(holding)).count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void start(Map<String, String> extra) throws IOException {
    Map<String, String> env = new HashMap<>(extra);
    env.putIfAbsent("RELAY_HEADER_TIMEOUT", "3s");
    node = JarNode.start("relay-fd", SECRET, List.of(), env, DESCRIPTOR_LIMIT);
  }

  /** Connects and sends nothing; connections the node does not accept wait in its backlog. */
  private void openIdleConnections(int port) throws IOException {
    for (int i = 0; i < IDLE_CONNECTIONS; i++) {
      Socket socket = new Socket();
      socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
      idle.add(socket);
    }
  }

  private void assertAnswersAClient() {
    String token = node.token("fd/demo", "read", "write");
    Await.until(
        "a client after the idle connections gets a relay URI (log: " + node.log() + ")",
        Duration.ofSeconds(60),
        () -> node.postSession("fd/demo", token) == 200);
  }

  private void assertQuietLog() throws IOException {
    long size = Files.size(node.log());
    assertTrue(size < 256 * 1024, "the log stays small under the attack: " + size + " bytes (" + node.log() + ")");
  }
}
