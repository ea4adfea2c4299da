package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A strict deny across node JVMs (docs/cluster.md, "A strict deny"). Three nodes; in each of
 * {@link #ROUNDS} rounds, clients at the two nodes that do not take the deny ask for codes for one
 * booking and redeem each at once, while the deny is taken at the first node, and then the allow.
 * Nothing sent after the deny's 204 gets a code or is admitted (a code issued at each of the two
 * before the deny is redeemed after its 204 in every round, and refused), every connection admitted before it
 * closes with 4003, and every code request sent after the allow's 204 gets a code. Then a node is
 * stopped (SIGSTOP) until the node taking the deny finds it unreachable: a deny is answered without waiting for
 * it, and once it runs again it refuses the booking too.
 */
class StrictDenyIT {
  private static final int ROUNDS = 20;
  private static final int CLIENTS_PER_NODE = 2;
  /** Attempts of each kind each racing node must have answered before the deny, and after each answer. */
  private static final int RACED = 20;
  private static final Duration ANSWER = Duration.ofSeconds(15);

  private final HarnessConfig config = HarnessConfig.fromSystemProperties();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final DirectRequests requests = new DirectRequests();

  /** A code request or an upgrade: when it was sent and answered (System.nanoTime), and what it got. */
  private record Attempt(String what, String node, long sentAt, long answeredAt, int status) {}

  /** A connection a racer got admitted, and the close code it ended with (0 while open). */
  private static final class Admitted implements WebSocket.Listener {
    final long sentAt;
    volatile int closeCode;
    volatile WebSocket socket;

    Admitted(long sentAt) {
      this.sentAt = sentAt;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      closeCode = statusCode;
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      closeCode = closeCode == 0 ? -1 : closeCode;
    }
  }

  @Test
  void afterTheAnswerNoReachableNodeIssuesACodeForTheBookingOrAdmitsItsConnections() throws Exception {
    Scenario scenario = new Scenario(config, "strict-deny", "direct");
    boolean passed = false;
    ExecutorService racers = Executors.newFixedThreadPool(2 * CLIENTS_PER_NODE);
    try (RelayCluster cluster = new RelayCluster(config, "ws://127.0.0.1:1", Map.of()).start(3)) {
      NodeProcess denier = cluster.running().get(0);
      List<NodeProcess> others = cluster.running().subList(1, 3);
      int codesBeforeDeny = 0;
      int admittedBeforeDeny = 0;
      int upgradesAfterDeny = 0;
      long slowestDeny = 0;
      for (int round = 0; round < ROUNDS; round++) {
        String booking = "race-" + round;
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<Attempt> attempts = new ConcurrentLinkedQueue<>();
        ConcurrentLinkedQueue<Admitted> admitted = new ConcurrentLinkedQueue<>();
        List<Future<?>> running = new ArrayList<>();
        Map<NodeProcess, String> topics = new HashMap<>();
        Map<NodeProcess, String> held = new HashMap<>();
        for (NodeProcess node : others) {
          // a topic of its own at each node: a topic's connections meet on one node
          String topic = "race/" + round + "/" + node.name;
          String token = Tokens.booked(topic, booking, "read", "write");
          topics.put(node, topic);
          // a code issued before the deny and redeemed only after its 204: the race the deny must win
          HttpResponse<String> issued = requests.session(node, topic, token);
          assertEquals(200, issued.statusCode(), "round " + round + ": a code before the deny at " + node.name + ": " + issued.body());
          held.put(node, DirectRequests.codeOf(issued));
          for (int c = 0; c < CLIENTS_PER_NODE; c++) {
            running.add(racers.submit(() -> race(node, topic, token, stop, attempts, admitted)));
          }
        }
        // traffic before the deny: every racing node has admitted connections of the booking
        Await.until(
            "round " + round + ": the racers have connections admitted at both nodes",
            ANSWER,
            () -> others.stream().allMatch(node -> count(attempts, "upgrade", node.name, Long.MIN_VALUE, 101) >= RACED));
        long denyStarted = System.nanoTime();
        HttpResponse<String> deny = requests.bids(denier, "deny", booking);
        long denied = System.nanoTime();
        assertEquals(204, deny.statusCode(), "round " + round + ": the deny is answered: " + deny.body());
        slowestDeny = Math.max(slowestDeny, (denied - denyStarted) / 1_000_000);
        for (NodeProcess node : others) {
          int status = upgrade("held upgrade", node, topics.get(node), held.get(node), attempts, admitted);
          assertEquals(403, status, "round " + round + ": a code issued at " + node.name + " before the deny, redeemed after its 204");
        }
        Await.until(
            "round " + round + ": the racers have asked both nodes for codes after the deny's 204",
            ANSWER,
            () -> others.stream().allMatch(node -> count(attempts, "code", node.name, denied, 0) >= RACED));
        long allowSent = System.nanoTime();
        HttpResponse<String> allow = requests.bids(denier, "allow", booking);
        long allowed = System.nanoTime();
        assertEquals(204, allow.statusCode(), "round " + round + ": the allow is answered: " + allow.body());
        Await.until(
            "round " + round + ": the racers have got codes at both nodes after the allow's 204",
            ANSWER,
            () -> others.stream().allMatch(node -> count(attempts, "code", node.name, allowed, 200) >= RACED));
        stop.set(true);
        for (Future<?> racer : running) {
          racer.get(ANSWER.toSeconds(), TimeUnit.SECONDS);
        }

        for (Attempt attempt : attempts) {
          // sent after the deny's 204 and answered before the allow was sent
          boolean afterDeny = attempt.sentAt() > denied && attempt.answeredAt() < allowSent;
          boolean afterAllow = attempt.sentAt() > allowed;
          if (attempt.what().equals("code") && afterDeny) {
            assertTrue(attempt.status() == 400, "round " + round + ": a code request sent to " + attempt.node() + " after the deny's 204 got " + attempt.status());
          }
          if (attempt.what().equals("code") && afterAllow) {
            assertEquals(200, attempt.status(), "round " + round + ": a code request sent to " + attempt.node() + " after the allow's 204");
          }
          if (attempt.what().equals("upgrade") && afterDeny) {
            assertTrue(attempt.status() != 101, "round " + round + ": an upgrade sent to " + attempt.node() + " after the deny's 204 was admitted");
            upgradesAfterDeny++;
          }
          if (attempt.sentAt() < denied && attempt.what().equals("code") && attempt.status() == 200) {
            codesBeforeDeny++;
          }
        }
        for (Admitted connection : admitted) {
          if (connection.sentAt < denied) {
            admittedBeforeDeny++;
            Await.until(
                "round " + round + ": a connection admitted before the deny closes with 4003",
                ANSWER,
                () -> connection.closeCode == 4003,
                () -> "close code " + connection.closeCode);
          }
          connection.socket.abort();
        }
        long codesAfterDeny = attempts.stream().filter(a -> a.what().equals("code") && a.sentAt() > denied && a.answeredAt() < allowSent).count();
        assertTrue(codesAfterDeny > 0, "round " + round + ": the racers asked for codes between the deny and the allow");
      }
      assertTrue(codesBeforeDeny > 0 && admittedBeforeDeny > 0, "the racers got codes and connections before the denies");
      scenario.put("rounds", ROUNDS);
      scenario.put("codes_before_deny", codesBeforeDeny);
      scenario.put("admitted_before_deny", admittedBeforeDeny);
      scenario.put("upgrades_after_deny", upgradesAfterDeny);
      scenario.put("slowest_deny_ms", slowestDeny);

      NodeProcess stopped = others.get(1);
      stopped.process().signal("STOP");
      try {
        Await.until(
            "the first node finds the stopped node unreachable", Duration.ofSeconds(20),
            () -> denier.unreachable().contains(stopped.address()));
        long start = System.nanoTime();
        HttpResponse<String> deny = requests.bids(denier, "deny", "while-away");
        scenario.put("deny_with_an_unreachable_node_ms", (System.nanoTime() - start) / 1_000_000);
        assertEquals(204, deny.statusCode(), "a deny does not wait for an unreachable node: " + deny.body());
      } finally {
        stopped.process().signal("CONT");
      }
      String token = Tokens.booked("away/topic", "while-away", "read", "write");
      Await.until(
          "the node that was stopped refuses codes for the booking denied while it was away", Duration.ofSeconds(30),
          () -> requests.session(stopped, "away/topic", token).statusCode() == 400);
      LogHygiene.assertClean(cluster.logs());
      passed = true;
    } finally {
      racers.shutdownNow();
      scenario.report(passed);
    }
  }

  /**
   * The attempts of kind {@code what} at {@code node} sent after {@code sentAfter} that got
   * {@code status} (any status when 0).
   */
  private static long count(ConcurrentLinkedQueue<Attempt> attempts, String what, String node, long sentAfter, int status) {
    return attempts.stream()
        .filter(a -> a.what().equals(what) && a.node().equals(node) && a.sentAt() > sentAfter && (status == 0 || a.status() == status))
        .count();
  }

  /** Asks {@code node} for codes and redeems each there at once, until stopped. */
  private void race(
      NodeProcess node, String topic, String token, AtomicBoolean stop, ConcurrentLinkedQueue<Attempt> attempts,
      ConcurrentLinkedQueue<Admitted> admitted) {
    while (!stop.get()) {
      long sent = System.nanoTime();
      HttpResponse<String> response = requests.session(node, topic, token);
      attempts.add(new Attempt("code", node.name, sent, System.nanoTime(), response.statusCode()));
      if (response.statusCode() != 200) {
        continue;
      }
      upgrade("upgrade", node, topic, DirectRequests.codeOf(response), attempts, admitted);
    }
  }

  /** Upgrades with {@code code} at {@code node}, recording the attempt as {@code what} (and the connection, if admitted); returns its status. */
  private int upgrade(String what, NodeProcess node, String topic, String code, ConcurrentLinkedQueue<Attempt> attempts, ConcurrentLinkedQueue<Admitted> admitted) {
    Admitted connection = new Admitted(System.nanoTime());
    try {
      connection.socket =
          http.newWebSocketBuilder()
              .buildAsync(URI.create("ws://127.0.0.1:" + node.relayPort + "/session/" + topic + "?code=" + code), connection)
              .get(ANSWER.toSeconds(), TimeUnit.SECONDS);
      attempts.add(new Attempt(what, node.name, connection.sentAt, System.nanoTime(), 101));
      admitted.add(connection);
      return 101;
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof WebSocketHandshakeException refused)) {
        throw new AssertionError("the upgrade at " + node.name + " failed", e);
      }
      int status = refused.getResponse().statusCode();
      attempts.add(new Attempt(what, node.name, connection.sentAt, System.nanoTime(), status));
      return status;
    } catch (Exception e) {
      throw new AssertionError("the upgrade at " + node.name + " did not complete", e);
    }
  }
}
