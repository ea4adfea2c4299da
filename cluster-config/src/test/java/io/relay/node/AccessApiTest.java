package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.nimbusds.jwt.JWTClaimsSet;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** What clients of the access API see: tokens, scopes, topics, codes and the deny list. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AccessApiTest {
  private static final Duration CODE_TTL = Duration.ofSeconds(1);
  @AutoClose private final TestNode node = TestNode.start(Map.of("relay.code-ttl", CODE_TTL.toMillis() + "ms"));
  private final AccessClient access = new AccessClient(node);

  private static JWTClaimsSet.Builder valid() {
    return Tokens.session("lab/a", List.of("read", "write"), "booking-1");
  }

  private void assertError(int status, AccessClient.Answer answer, String why) {
    assertEquals(status, answer.status(), why + ": " + answer.body());
    assertEquals(status, answer.body().get("code").asInt(), why + ": JSON carries the code");
    assertTrue(!answer.body().get("message").asText().isBlank(), why + ": JSON carries a message");
  }

  @Test
  void validTokenRawOrBearerGetsAOneTimeUri() {
    String token = Tokens.sign(valid().build());
    for (String authorization : List.of(token, "Bearer " + token)) {
      AccessClient.Answer answer = access.post("/session/lab/a", authorization);
      assertEquals(200, answer.status(), answer.toString());
      String uri = answer.body().get("uri").asText();
      assertTrue(uri.matches("ws://127\\.0\\.0\\.1:" + node.relayPort + "/session/lab/a\\?code=[A-Za-z0-9_-]{32}"), uri);
    }
  }

  @Test
  void aSessionPathAskedWithAnotherMethodGetsAJson405NamingPost() {
    for (String method : List.of("GET", "PUT", "DELETE")) {
      AccessClient.Answer answer = access.request(method, "/session/lab/a", Map.of());
      assertError(405, answer, method);
      assertEquals(List.of("POST"), answer.headers().allValues("Allow"), method + ": Allow names the one method");
    }
  }

  @Test
  void badTokensGet401() {
    Instant now = Instant.now();
    Map<String, String> tokens =
        Map.of(
            "alg none", Tokens.unsigned(valid().build()),
            "wrong key", Tokens.sign(valid().build(), "another-secret-0123456789abcdef-0123456789"),
            "wrong audience", Tokens.sign(valid().audience("http://elsewhere").build()),
            "past exp", Tokens.sign(valid().expirationTime(Date.from(now.minusSeconds(60))).build()),
            "future nbf", Tokens.sign(valid().notBeforeTime(Date.from(now.plusSeconds(60))).build()),
            "no exp", Tokens.sign(valid().expirationTime(null).build()),
            "no scopes", Tokens.sign(valid().claim("scopes", null).build()),
            "no aud", Tokens.sign(valid().audience((String) null).build()),
            "no topic", Tokens.sign(valid().claim("topic", null).build()),
            "garbage", "not.a.token");
    tokens.forEach((why, token) -> assertError(401, access.post("/session/lab/a", token), why));
    assertError(401, access.post("/session/lab/a", null), "no Authorization header");
  }

  @Test
  void missingScopeGets403() {
    assertError(403, access.post("/session/lab/a", Tokens.sign(valid().claim("scopes", List.of("relay:stats")).build())), "no read or write");
    assertError(403, access.get("/status", Tokens.session("lab/a", "read")), "status needs relay:stats");
    assertError(403, access.post("/bids/deny?bid=b&exp=9999999999", Tokens.admin("relay:stats")), "deny needs relay:admin");
  }

  @Test
  void topicMismatchOrBadTopicGets400() {
    assertError(400, access.post("/session/lab/b", Tokens.sign(valid().build())), "path differs from claim");
    for (String bad : List.of("lab/a%20b", "lab//a", "lab/../a", "x".repeat(257))) {
      String token = Tokens.sign(valid().claim("topic", bad).build());
      assertError(400, access.post("/session/" + bad, token), "bad topic " + bad);
    }
  }

  @Test
  void tokenWithoutBookingIdIsRefusedByDefault() {
    assertError(401, access.post("/session/lab/a", Tokens.sign(valid().claim("booking_id", null).build())), "no booking_id");
  }

  @Test
  void codesAreOneTimeTopicBoundAndShortLived() throws Exception {
    String token = Tokens.sign(valid().build());
    String uri = access.relayUri("lab/a", token);
    try (Participant first = Participant.connect(uri)) {
      assertEquals(401, assertThrows(Participant.Refused.class, () -> Participant.connect(uri)).status, "a used code is refused");
    }
    String code = access.relayUri("lab/a", token).replaceAll(".*code=", "");
    assertEquals(
        401,
        assertThrows(Participant.Refused.class, () -> Participant.connect(node.relay("/session/lab/other?code=" + code).toString())).status,
        "a code for another topic is refused");
    assertEquals(
        401,
        assertThrows(Participant.Refused.class, () -> Participant.connect(node.relay("/session/lab/a?code=AAAAAAAAAAAAAAAAAAAAAA").toString())).status,
        "an unknown code is refused");
    assertEquals(
        401,
        assertThrows(Participant.Refused.class, () -> Participant.connect(node.relay("/session/lab/a").toString())).status,
        "a missing code is refused");
    String expiring = access.relayUri("lab/a", token);
    Await.pause(CODE_TTL.plusMillis(100).toMillis()); // the code's lifetime passes
    assertEquals(401, assertThrows(Participant.Refused.class, () -> Participant.connect(expiring)).status, "an expired code is refused");
  }

  @Test
  void denyClosesLiveConnectionsAndRefusesNewRequestsUntilAllowed() {
    String admin = Tokens.admin("relay:admin");
    long exp = Instant.now().plusSeconds(3600).getEpochSecond();
    String denied = Tokens.sign(Tokens.session("lab/deny", List.of("read", "write"), "booking-x").build());
    String other = Tokens.sign(Tokens.session("lab/deny", List.of("read", "write"), "booking-y").build());
    List<Participant> participants = new ArrayList<>();
    try (Participant victim = Participant.connect(access.relayUri("lab/deny", denied));
        Participant bystander = Participant.connect(access.relayUri("lab/deny", other))) {
      String pending = access.relayUri("lab/deny", denied);
      assertEquals(204, access.post("/bids/deny?bid=booking-x&exp=" + exp, admin).status());
      assertEquals(4003, victim.awaitClose(Duration.ofSeconds(5)), "the denied booking's connection closes with 4003");
      assertEquals(403, assertThrows(Participant.Refused.class, () -> Participant.connect(pending)).status, "its pending code is void");
      AccessClient.Answer refused = access.post("/session/lab/deny", denied);
      assertError(400, refused, "a denied booking asks for a code");
      assertTrue(refused.body().get("message").asText().contains("deny-listed"), refused.body().toString());
      assertEquals(List.of("booking-x"), ids(access.get("/bids/deny", admin)));

      assertEquals(204, access.post("/bids/allow?bid=booking-x&exp=" + exp, admin).status());
      assertEquals(List.of(), ids(access.get("/bids/deny", admin)));
      assertEquals(List.of("booking-x"), ids(access.get("/bids/allow", admin)));
      participants.add(Participant.connect(access.relayUri("lab/deny", denied)));
      bystander.sendText("still open");
      assertEquals("still open", participants.get(0).next().asText(), "other bookings were never closed");
    } finally {
      participants.forEach(Participant::close);
    }
  }

  @Test
  void badDenyRequestsGet400() {
    String admin = Tokens.admin("relay:admin");
    assertError(400, access.post("/bids/deny?exp=9999999999", admin), "missing bid");
    assertError(400, access.post("/bids/deny?bid=b", admin), "missing exp");
    assertError(400, access.post("/bids/deny?bid=b&exp=soon", admin), "bad exp");
  }

  @Test
  void unknownPathsGetJson404() {
    assertError(404, access.get("/nothing", Tokens.admin("relay:stats")), "unknown path");
    // a path that only starts with "session" names no topic, even one the token's topic matches
    assertError(404, access.post("/sessionlab/a", Tokens.sign(valid().build())), "/sessionlab/a is not /session/lab/a");
  }

  @Test
  void theOperatorPagesAreServedByNameAndAnEscapedSeparatorUnderUiIsUnknownWithoutALogLine() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    try (LogCapture log = new LogCapture()) {
      HttpResponse<String> page = http.send(HttpRequest.newBuilder(node.access("/ui/cluster.html")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, page.statusCode(), "the cluster page");
      assertTrue(page.headers().firstValue("Content-Type").orElse("").startsWith("text/html"), page.headers().toString());
      for (String path : List.of("/ui/a%5Cb", "/ui/a%2Fb", "/ui/cluster.html.bak")) {
        HttpResponse<String> refused = http.send(HttpRequest.newBuilder(node.access(path)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(404, refused.statusCode(), path);
      }
      // Pekko's log lines reach the log through its logging actor, in order: a line logged after the
      // answers arrived comes after any warning they caused
      Adapter.toClassic(node.system).log().warning("the 404s were answered");
      Await.until("the line logged after the answers reaches the log", Duration.ofSeconds(10),
          () -> !log.messagesContaining("the 404s were answered").isEmpty());
      assertEquals(List.of(), log.messagesContaining("suspicious path segment"), "a client's path is not a warning per request");
    }
  }

  /**
   * A node on two or fewer cores, as the tests' JVMs are made to look by the build (the JDK's
   * default async executor then starts a thread per task), answers code requests, the route
   * tree's answers (a 404, a code request with an escape in its path) and its pages without
   * starting a thread for any of them.
   */
  @Test
  void answersStartNoThreadOfTheirOwn() {
    assertEquals(1, ForkJoinPool.getCommonPoolParallelism(), "the build runs the tests' JVMs as on two cores (the root pom's argLine)");
    String token = Tokens.sign(valid().build());
    String stats = Tokens.admin("relay:stats");
    HttpClient http = HttpClient.newHttpClient();
    Runnable requests =
        () -> {
          assertEquals(200, access.post("/session/lab/a", token).status(), "a code request");
          assertEquals(404, access.get("/nothing", stats).status(), "the route tree's answer");
          try {
            assertEquals(200, http.send(HttpRequest.newBuilder(node.access("/ui/cluster.html")).build(), HttpResponse.BodyHandlers.ofString()).statusCode(), "a page");
          } catch (IOException | InterruptedException e) {
            throw new AssertionError("the page was not answered", e);
          }
          assertEquals(200, access.post("/session/lab/%61", token).status(), "a code request with an escape, which the route tree answers");
        };
    for (int i = 0; i < 20; i++) {
      requests.run(); // the node's dispatchers (the pages' blocking pool: up to 16 threads) and the client's connection are started
    }
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long before = threads.getTotalStartedThreadCount();
    int rounds = 30;
    for (int i = 0; i < rounds; i++) {
      requests.run();
    }
    long started = threads.getTotalStartedThreadCount() - before;
    assertTrue(started < rounds, started + " threads started while the node answered " + 4 * rounds + " requests");
  }

  private static List<String> ids(AccessClient.Answer answer) {
    assertEquals(200, answer.status(), answer.toString());
    List<String> ids = new ArrayList<>();
    answer.body().get("booking_ids").forEach(id -> ids.add(id.asText()));
    return ids;
  }
}
