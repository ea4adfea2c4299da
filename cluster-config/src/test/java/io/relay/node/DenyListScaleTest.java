package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.deny.DenyCapacity;
import io.relay.deny.DenyList;
import io.relay.deny.DenyListStatus;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The deny list at scale on a three-node cluster in this JVM: it is filled with bookings of the
 * longest id, and after each batch, once every node's replica holds the batch before, every node
 * is asked for a code for every booking of it (each must be refused); then a node is replaced, and the new one must be ready within 30 s
 * with the whole list, never issuing a code for a denied booking nor admitting a connection before
 * it has read the list; after that every node refuses every denied booking.
 *
 * <p>{@code -Ddeny.entries=10000} runs the full-size form (docs/cluster.md), which also prints the
 * deny writes per second by batch and how soon the replaced node was ready; 2,000 entries by
 * default, printing nothing. Rates are never asserted.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DenyListScaleTest {
  private static final int ENTRIES = Integer.getInteger("deny.entries", 2_000);
  /** Whether the test was asked for the full-size form: then it prints what it measured. */
  private static final boolean MEASURING = System.getProperty("deny.entries") != null;
  private static final int BATCHES = 10;
  private static final int CONCURRENCY = 8;
  /** How long a deny is sent again while it is answered 503. */
  private static final Duration DENY_RETRIES = Duration.ofSeconds(30);
  private static final Duration READY_WITHIN = Duration.ofSeconds(30);
  /** Codes fetched before the restart stay valid through it. */
  private static final Map<String, Object> SETTINGS = Map.of("relay.code-ttl", "2m");
  private static final String TOPIC = "scale/deny";

  private final List<TestNode> nodes = new ArrayList<>();
  private final ExecutorService pool = Executors.newFixedThreadPool(CONCURRENCY);
  private final String admin = Tokens.admin("relay:admin");
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @BeforeAll
  void startCluster() {
    TestNode seed = TestNode.start(SETTINGS);
    nodes.add(seed);
    nodes.add(TestNode.joining(seed, SETTINGS));
    nodes.add(TestNode.joining(seed, SETTINGS));
  }

  @AfterAll
  void stopCluster() {
    pool.shutdownNow();
    for (int i = nodes.size() - 1; i >= 0; i--) {
      nodes.get(i).close();
    }
  }

  @Test
  void aFullDenyListReachesAReplacedNodeAndNoNodeEverIssuesACodeForADeniedBooking() throws Exception {
    assertTrue(ENTRIES <= DenyCapacity.DEFAULT.total(), "at most the deny list's capacity");
    List<String> ids = ids(ENTRIES);
    long exp = Instant.now().plus(Duration.ofDays(364)).getEpochSecond();
    int batch = ENTRIES / BATCHES;
    List<Double> rates = new ArrayList<>();
    for (int b = 0; b < BATCHES; b++) {
      List<String> slice = ids.subList(b * batch, b == BATCHES - 1 ? ENTRIES : (b + 1) * batch);
      long started = System.nanoTime();
      inParallel(slice.size(), i -> deny(nodes.get(i % nodes.size()), slice.get(i), exp));
      rates.add(slice.size() / ((System.nanoTime() - started) / 1e9));
      if (b > 0) {
        List<String> before = ids.subList((b - 1) * batch, b * batch);
        awaitReplicated(before);
        inParallel(before.size() * nodes.size(), i -> assertRefused(nodes.get(i % nodes.size()), before.get(i / nodes.size())));
      }
    }
    if (MEASURING) {
      System.out.printf("deny writes per second by batch of %d (list growing to %d): %s%n", batch, ENTRIES, rounded(rates));
    }
    for (TestNode node : nodes) {
      Await.until(
          "the replica of " + node.address() + " holds every entry",
          Duration.ofSeconds(20),
          () -> NodeState.get(node.system).denyList().entries() == ENTRIES,
          () -> NodeState.get(node.system).denyList().entries() + " entries");
    }
    List<String> last = ids.subList((BATCHES - 1) * batch, ENTRIES);
    inParallel(last.size() * nodes.size(), i -> assertRefused(nodes.get(i % nodes.size()), last.get(i / nodes.size())));
    for (TestNode node : nodes) {
      assertEquals(ENTRIES, listed(node), "GET /bids/deny on " + node.address() + " lists every booking");
    }
    if (ENTRIES == DenyCapacity.DEFAULT.total()) {
      AccessClient.Answer full = access(nodes.get(0)).post("/bids/deny?bid=one-more&exp=" + exp, admin);
      assertEquals(507, full.status(), "a booking beyond the capacity: " + full.body());
    }

    replaceANode(ids);
  }

  /** Replaces the last node with a new one while another client keeps asking it for codes. */
  private void replaceANode(List<String> ids) throws Exception {
    TestNode seed = nodes.get(0);
    nodes.remove(nodes.size() - 1).close();
    List<String> codes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      codes.add(code(seed, "allowed-" + i));
    }
    long started = System.nanoTime();
    TestNode joined = TestNode.launching(seed, SETTINGS);
    nodes.add(joined);
    Map<String, Integer> seen = new TreeMap<>();
    int asked = 0;
    while (joined.readyStatus() != 200) {
      assertTrue(
          System.nanoTime() - started < READY_WITHIN.toNanos(),
          "the replaced node was ready within " + READY_WITHIN + "; answers so far: " + seen);
      String id = ids.get(asked++ % ids.size());
      String answer = sessionStatus(joined, id);
      seen.merge(answer, 1, Integer::sum);
      assertFalse(answer.equals("200"), "the joining node issued a code for denied booking " + id + " (answers: " + seen + ")");
      String code = codes.get(asked % codes.size());
      String admitted = upgradeStatus(joined, code);
      seen.merge("relay " + admitted, 1, Integer::sum);
      if (admitted.equals("101")) {
        assertTrue(
            NodeState.get(joined.system).denyList().isRead(),
            "the joining node admitted a connection before it had read the deny list");
        codes.remove(code);
      }
    }
    assertTrue(
        seen.keySet().stream().anyMatch(answer -> answer.matches("(relay )?\\d{3}")),
        "the joining node answered a probe before it was ready, so the probes checked something: " + seen);
    long readyMs = (System.nanoTime() - started) / 1_000_000;
    if (MEASURING) {
      System.out.printf("replaced node ready with %d entries in %d ms; its answers while joining: %s%n", ENTRIES, readyMs, seen);
    }
    assertEquals(ENTRIES, listed(joined), "the replaced node lists every booking");
    inParallel(ids.size() * nodes.size(), i -> assertRefused(nodes.get(i % nodes.size()), ids.get(i / nodes.size())));
    String allowed = joined.relay("/session/" + TOPIC + "?code=" + codes.get(0)).toString();
    assertDoesNotThrow(() -> Participant.connect(allowed).close(), "the replaced node admits an allowed booking once ready");
  }

  private static AccessClient access(TestNode node) {
    return new AccessClient(node, HTTP);
  }

  /** {@code count} booking ids of the longest length, each unlike the others. */
  private static List<String> ids(int count) {
    Random random = new Random(42);
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    List<String> ids = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      StringBuilder id = new StringBuilder(String.format("%06d-", i));
      while (id.length() < DenyCapacity.MAX_BOOKING_ID_BYTES) {
        id.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      ids.add(id.toString());
    }
    return ids;
  }

  /**
   * Waits until every node's replica holds every booking of {@code denied}: a deny is on a
   * majority when it is answered, the other node receives it by Distributed Data's next delta
   * propagation (every 400 ms) or gossip round, and until then may still issue a code for the
   * booking (docs/cluster.md, "Propagation").
   */
  private void awaitReplicated(List<String> denied) {
    for (TestNode node : nodes) {
      DenyListStatus replica = NodeState.get(node.system).denyList();
      Await.until(
          "the replica of " + node.address() + " holds the batch's denies",
          Duration.ofSeconds(10),
          () -> denied.stream().allMatch(id -> replica.verdict(id) == DenyList.Verdict.DENIED),
          () -> denied.stream().filter(id -> replica.verdict(id) != DenyList.Verdict.DENIED).count() + " of the batch missing");
    }
  }

  /**
   * Denies {@code id}, sending it again while it is answered 503 with {@code Retry-After} (a member
   * did not confirm in time, as on a loaded machine), as a booking system does, for at most {@link
   * #DENY_RETRIES}; any other answer than 204 fails.
   */
  private void deny(TestNode node, String id, long exp) {
    AtomicReference<AccessClient.Answer> last = new AtomicReference<>();
    Await.until("the deny of " + id + " on " + node.address() + " is answered other than 503", DENY_RETRIES, () -> {
      AccessClient.Answer answer = access(node).post("/bids/deny?bid=" + id + "&exp=" + exp, admin);
      last.set(answer);
      if (answer.status() == 503) {
        assertTrue(answer.headers().firstValue("Retry-After").isPresent(), "a 503 says when to retry: " + answer.body());
        return false;
      }
      return true;
    }, () -> String.valueOf(last.get().body()));
    assertEquals(204, last.get().status(), "deny of " + id + " on " + node.address() + ": " + last.get().body());
  }

  private static String token(String bookingId) {
    return Tokens.sign(Tokens.session(TOPIC, List.of("read", "write"), bookingId).build());
  }

  private static void assertRefused(TestNode node, String id) {
    AccessClient.Answer answer = access(node).post("/session/" + TOPIC, token(id));
    assertEquals(400, answer.status(), node.address() + " must refuse denied booking " + id + ": " + answer.body());
    assertTrue(answer.body().get("message").asText().contains("deny-listed"), answer.body().toString());
  }

  private static String code(TestNode node, String bookingId) {
    return access(node).relayUri(TOPIC, token(bookingId)).replaceAll(".*code=", "");
  }

  /** POST /session's status on {@code node}, or what kept it from answering. */
  private static String sessionStatus(TestNode node, String bookingId) {
    try {
      return String.valueOf(access(node).post("/session/" + TOPIC, token(bookingId)).status());
    } catch (AssertionError notListening) {
      return "no answer";
    }
  }

  /** The relay's answer to an upgrade with {@code code}: its status, or what kept it from answering. */
  private static String upgradeStatus(TestNode node, String code) {
    String response;
    try (RawWebSocket socket = RawWebSocket.connect(node.relay("/session/" + TOPIC + "?code=" + code).toString())) {
      response = socket.response;
    } catch (IOException | AssertionError notListening) {
      return "no answer";
    }
    String status = response.split(" ", 3)[1];
    if (status.equals("503")) {
      assertTrue(response.contains("Retry-After: 1"), "a 503 says when to retry: " + response);
    }
    return status;
  }

  private int listed(TestNode node) {
    AccessClient.Answer answer = access(node).get("/bids/deny", admin);
    assertEquals(200, answer.status(), answer.toString());
    return answer.body().get("booking_ids").size();
  }

  /** Runs {@code task} for 0 until {@code count} on the pool and rethrows the first failure. */
  private void inParallel(int count, Consumer<Integer> task) throws InterruptedException {
    List<Future<?>> running = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int index = i;
      running.add(pool.submit(() -> task.accept(index)));
    }
    for (Future<?> future : running) {
      try {
        future.get(60, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof Error error) {
          throw error;
        }
        throw new AssertionError("a request failed", e.getCause());
      } catch (TimeoutException e) {
        throw new AssertionError("a request did not finish within 60 s", e);
      }
    }
  }

  private static List<Long> rounded(List<Double> rates) {
    return rates.stream().map(Math::round).toList();
  }
}
