package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.relay.RelaySettings;
import io.relay.codes.CodeStore;
import io.relay.deny.DenyList;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.HeadTimeout;
import io.relay.http.server.PortCounters;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.Tokens;
import io.relay.topic.TopicRegistry;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.testkit.TestRouteResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.LoggerFactory;

/**
 * The access API's limits, as a client sees them: booking ids of at most 128 bytes (token claim
 * and {@code bid}), a deny's {@code exp} in the future and at most a year ahead, 507 when the deny
 * list is full, and 503 with {@code Retry-After} from a node that has not read the deny list. The
 * node's actors are stand-ins; the routes, token checks and JSON errors are the real ones.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AccessLimitsRouteTest extends RouteTesting {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpSettings http =
      HttpSettings.create(
          ConfigFactory.parseMap(Map.of("relay.secret", Tokens.SECRET, "relay.audience", Tokens.AUDIENCE, "relay.ask-timeout", "1s"))
              .withFallback(ConfigFactory.load()));
  private final WarningLimiter errors =
      WarningLimiter.start(kit.system(), LoggerFactory.getLogger(AccessLimitsRouteTest.class), Duration.ofSeconds(10));
  private final RelaySettings relay = RelaySettings.create(ConfigFactory.load());
  private final RelayMetrics metrics = new RelayMetrics();
  private final AtomicBoolean denyListRead = new AtomicBoolean(true);
  private final ActorRef<DenyList.Command> denyList = kit.spawn(denyList());
  private final ActorRef<CodeStore.Command> codes = kit.spawn(codes());

  @AfterAll
  void stop() {
    kit.shutdownTestKit();
  }

  @BeforeEach
  void read() {
    denyListRead.set(true);
  }

  /** Bookings named denied-* are denied; nothing is known while the deny list is unread. */
  private DenyList.Verdict verdict(String bookingId) {
    if (!denyListRead.get()) {
      return DenyList.Verdict.UNREAD;
    }
    return bookingId.startsWith("denied") ? DenyList.Verdict.DENIED : DenyList.Verdict.ALLOWED;
  }

  /**
   * A deny list that stores everything; bookings named full-* do not fit, unconfirmed-* are not
   * confirmed by every node, unreplicated-* do not reach a majority.
   */
  private static Behavior<DenyList.Command> denyList() {
    return Behaviors.receiveMessage(
        command -> {
          if (command instanceof DenyList.Set set) {
            set.replyTo().tell(
                set.bookingId().startsWith("full")
                    ? DenyList.Outcome.FULL
                    : set.bookingId().startsWith("unconfirmed")
                        ? DenyList.Outcome.UNCONFIRMED
                        : set.bookingId().startsWith("unreplicated") ? DenyList.Outcome.UNAVAILABLE : DenyList.Outcome.STORED);
          } else if (command instanceof DenyList.ListBookings list) {
            list.replyTo().tell(List.of());
          }
          return Behaviors.same();
        });
  }

  /** A code store that stores every code but the booking unreplicated's and never answers for the booking silent. */
  private static Behavior<CodeStore.Command> codes() {
    return Behaviors.receiveMessage(
        command -> {
          if (command instanceof CodeStore.Issue issue && !"silent".equals(issue.bookingId())) {
            issue.replyTo().tell("unreplicated".equals(issue.bookingId()) ? CodeStore.Unavailable.INSTANCE : new CodeStore.Stored("AAAAAAAAAAAAAAAAAAAAAA"));
          }
          return Behaviors.same();
        });
  }

  private Route access() {
    AccessGuard guard = new AccessGuard(new TokenVerifier(http, TokenKeys.from(http), 0, () -> {}, () -> System.currentTimeMillis() / 1000), errors, metrics);
    return concat(
        new SessionRoutes(guard, http, codes, this::verdict, metrics, kit.system()).route(),
        new BidsRoutes(guard, http, relay.denyMaxLifetime(), Duration.ofSeconds(5), denyList, denyListRead::get, metrics, kit.system())
            .route());
  }

  private static String token(String topic, List<String> scopes, String bookingId) {
    return Tokens.sign(Tokens.session(topic, scopes, bookingId).build());
  }

  private static final String ADMIN = token(null, List.of("relay:admin"), null);

  private TestRouteResult session(String bookingId) {
    return session("lab/a", bookingId);
  }

  private TestRouteResult session(String topic, String bookingId) {
    return testRoute(access())
        .run(HttpRequest.POST("/session/" + topic).addHeader(RawHeader.create("Authorization", token(topic, List.of("read"), bookingId))));
  }

  private TestRouteResult deny(String bid, String exp) {
    String query = "bid=" + URLEncoder.encode(bid, StandardCharsets.UTF_8) + "&exp=" + exp;
    return testRoute(access()).run(HttpRequest.POST("/bids/deny?" + query).addHeader(RawHeader.create("Authorization", ADMIN)));
  }

  private static JsonNode assertError(int status, TestRouteResult result, String why) {
    assertEquals(status, result.statusCode(), why + ": " + result.entityString());
    assertEquals("application/json", result.mediaTypeString(), why + ": a JSON error");
    try {
      JsonNode body = JSON.readTree(result.entityString());
      assertEquals(status, body.get("code").asInt(), why + ": the JSON carries the status");
      assertFalse(body.get("message").asText().isBlank(), why + ": the JSON carries a message");
      return body;
    } catch (java.io.IOException e) {
      throw new AssertionError(why + ": not JSON: " + result.entityString(), e);
    }
  }

  private static long now() {
    return Instant.now().getEpochSecond();
  }

  private double refusals(String limit) {
    return metrics.limitRefusals.labelValues(limit).get();
  }

  @Test
  void aTokenBookingIdOfMoreThan128BytesGets400() {
    double before = refusals("booking_id_length");
    JsonNode body = assertError(400, session("b".repeat(129)), "129-character booking_id");
    assertTrue(body.get("message").asText().contains("128"), "the message names the limit: " + body);
    assertError(400, session("é".repeat(65)), "65 two-byte characters (130 bytes)");
    assertEquals(before + 2, refusals("booking_id_length"), "each refusal is counted");
    assertEquals(200, session("b".repeat(128)).statusCode(), "128 characters get a code");
    assertEquals(200, session("0f8fad5b-d9cb-469f-a165-70867728950e").statusCode(), "a UUID gets a code");
  }

  @Test
  void aTokenWithMoreScopesThanACodeCarriesGets400() {
    double before = refusals("scopes");
    List<String> many = new java.util.ArrayList<>(List.of("read"));
    for (int i = 1; i < 256; i++) {
      many.add("s" + i);
    }
    TestRouteResult refused =
        testRoute(access()).run(HttpRequest.POST("/session/lab/a").addHeader(RawHeader.create("Authorization", token("lab/a", many, "b1"))));
    JsonNode body = assertError(400, refused, "256 scopes");
    assertTrue(body.get("message").asText().contains("255"), "the message names the limit: " + body);
    assertEquals(before + 1, refusals("scopes"), "the refusal is counted");
    TestRouteResult most =
        testRoute(access()).run(HttpRequest.POST("/session/lab/a").addHeader(RawHeader.create("Authorization", token("lab/a", many.subList(0, 255), "b1"))));
    assertEquals(200, most.statusCode(), "255 scopes get a code: " + most.entityString());
  }

  @Test
  void aBidOfMoreThan128BytesGets400() {
    String exp = String.valueOf(now() + 600);
    JsonNode body = assertError(400, deny("b".repeat(129), exp), "129-character bid");
    assertTrue(body.get("message").asText().contains("128"), "the message names the limit: " + body);
    assertError(400, deny("b".repeat(1900), exp), "a 1,900-character bid");
    assertEquals(204, deny("b".repeat(128), exp).statusCode(), "128 characters are denied");
    assertError(
        400,
        testRoute(access())
            .run(HttpRequest.POST("/bids/allow?bid=" + "b".repeat(129) + "&exp=" + exp).addHeader(RawHeader.create("Authorization", ADMIN))),
        "an allow is held to the same limit");
  }

  @Test
  void aDenyExpMustLieInTheFutureAndAtMostAYearAhead() {
    double before = refusals("deny_exp");
    long now = now();
    assertError(400, deny("b1", String.valueOf(now - 60)), "exp in the past");
    assertError(400, deny("b1", String.valueOf(now - 1)), "exp a second ago");
    JsonNode body = assertError(400, deny("b1", String.valueOf(now + Duration.ofDays(366).toSeconds())), "exp 366 days ahead");
    assertTrue(body.get("message").asText().contains("365 days"), "the message names the bound: " + body);
    assertError(400, deny("b1", String.valueOf(Long.MAX_VALUE)), "exp Long.MAX_VALUE");
    assertEquals(before + 4, refusals("deny_exp"), "each refusal is counted");
    assertError(400, deny("b1", "99999999999999999999"), "exp beyond a long");
    assertError(400, deny("b1", "0"), "exp 0");
    assertEquals(204, deny("b1", String.valueOf(now + 60)).statusCode(), "a minute ahead");
    assertEquals(204, deny("b1", String.valueOf(now + Duration.ofDays(364).toSeconds())).statusCode(), "364 days ahead");
  }

  @Test
  void aNewBookingBeyondTheDenyListsCapacityGets507() {
    double before = refusals("deny_capacity");
    JsonNode body = assertError(507, deny("full-1", String.valueOf(now() + 600)), "a full deny list");
    assertTrue(body.get("message").asText().startsWith("the deny list has no room for another booking"), body.toString());
    assertEquals(before + 1, refusals("deny_capacity"));
  }

  @Test
  void aTopicOfMoreThan256CharactersGets400AndIsCounted() {
    double before = refusals("topic_length");
    JsonNode body = assertError(400, session("t".repeat(257), "b1"), "a 257-character topic");
    assertTrue(body.get("message").asText().contains("256"), "the message names the limit: " + body);
    assertEquals(before + 1, refusals("topic_length"), "counted");
    assertEquals(200, session("t".repeat(256), "b1").statusCode(), "256 characters get a code");
    assertError(400, session("t/../u", "b1"), "a topic with '..'");
    assertEquals(before + 1, refusals("topic_length"), "a malformed topic is not a length refusal");
  }

  @Test
  void aCodeNotStoredOrADenyThatDidNotReachAMajorityIsAnswered503WithRetryAfterAndCounted() {
    TestRouteResult code = session("unreplicated");
    assertError(503, code, "a code the store could not store");
    code.assertHeaderExists("Retry-After", "1");
    assertEquals(1.0, metrics.writesFailed.labelValues("code").get(), "counted");
    TestRouteResult denied = deny("unreplicated-1", String.valueOf(now() + 600));
    JsonNode error = assertError(503, denied, "a deny that did not reach a majority");
    denied.assertHeaderExists("Retry-After", "1");
    assertTrue(error.path("message").asText().contains("majority"), error.toString());
    assertEquals(1.0, metrics.writesFailed.labelValues("deny").get(), "counted");
  }

  @Test
  void anActorThatDoesNotAnswerWithinTheAskTimeoutGives503WithRetryAfterAndIsCounted() {
    double before = metrics.requestTimeouts.get();
    TestRouteResult code = session("silent");
    JsonNode error = assertError(503, code, "a code store that did not answer in time");
    code.assertHeaderExists("Retry-After", "1");
    assertTrue(error.path("message").asText().contains("in time"), error.toString());
    assertEquals(before + 1, metrics.requestTimeouts.get(), "counted");
  }

  @Test
  void aNodeThatHasNotReadTheDenyListAnswers503WithRetryAfter() {
    denyListRead.set(false);
    TestRouteResult session = session("b1");
    assertError(503, session, "POST /session");
    session.assertHeaderExists("Retry-After", "1");
    TestRouteResult denied = deny("b1", String.valueOf(now() + 600));
    assertError(503, denied, "POST /bids/deny");
    denied.assertHeaderExists("Retry-After", "1");
    assertError(503, testRoute(access()).run(HttpRequest.GET("/bids/deny").addHeader(RawHeader.create("Authorization", ADMIN))), "GET /bids/deny");
    assertTrue(metrics.unreadRefusals.labelValues("session").get() >= 1, "counted");
    assertError(400, session("b".repeat(129)), "bad requests still get their own error first");
  }

  @Test
  void aChangeANodeDidNotConfirmIsAnswered503WithRetryAfterAndCounted() {
    double unconfirmedBefore = metrics.denyUnconfirmed.get();
    double deniesBefore = metrics.denies.get();
    TestRouteResult unconfirmed = deny("unconfirmed-1", String.valueOf(now() + 600));
    JsonNode error = assertError(503, unconfirmed, "POST /bids/deny");
    unconfirmed.assertHeaderExists("Retry-After", "1");
    assertTrue(error.path("message").asText().contains("did not confirm"), error.toString());
    assertEquals(unconfirmedBefore + 1, metrics.denyUnconfirmed.get(), "counted");
    assertEquals(deniesBefore, metrics.denies.get(), "not counted as a deny");
  }

  @Test
  void aNodeThatHasNotReadTheDenyListAdmitsNoConnection() {
    denyListRead.set(false);
    String answer = upgrade(new AdmissionGate(8, () -> {}));
    assertTrue(answer.startsWith("HTTP/1.1 503 "), answer);
    assertTrue(answer.contains("\r\nRetry-After: 1\r\n"), answer);
    assertTrue(metrics.unreadRefusals.labelValues("relay").get() >= 1, "counted");
  }

  @Test
  void anUpgradePastTheAdmissionGateGets503WithRetryAfterAtOnceAndIsCounted() {
    AtomicInteger refused = new AtomicInteger();
    String answer = upgrade(new AdmissionGate(0, refused::incrementAndGet));
    assertTrue(answer.startsWith("HTTP/1.1 503 "), answer);
    assertTrue(answer.contains("\r\nRetry-After: 1\r\n"), answer);
    assertTrue(answer.contains("\r\nConnection: close\r\n"), answer);
    assertTrue(answer.endsWith("the node is admitting as many clients as it can; retry\n"), "a one-line body saying why: " + answer);
    assertEquals(1, refused.get(), "counted");
  }

  /** A relay upgrade with a code, through {@code gate}, as the relay port serves it: the answer's text. */
  private String upgrade(AdmissionGate gate) {
    ActorRef<TopicRegistry.Command> registry = kit.<TopicRegistry.Command>createTestProbe().ref();
    EmbeddedChannel channel = new EmbeddedChannel();
    // where the client ports put the head timeout, which the upgrade removes once the head has come
    channel.pipeline().addLast(HeadTimeout.NAME, new ChannelInboundHandlerAdapter());
    RelayUpgrade.install(
        channel.pipeline(),
        new Admission(http, relay, codes, this::verdict, denyListRead::get, registry, metrics, kit.system(), () -> false, errors),
        gate,
        new PortCounters(),
        errors,
        null);
    byte[] upgrade =
        ("GET /session/lab/a?code=AAAAAAAAAAAAAAAAAAAAAA HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    channel.writeInbound(Unpooled.wrappedBuffer(upgrade));
    StringBuilder answer = new StringBuilder();
    for (ByteBuf bytes; (bytes = channel.readOutbound()) != null; ) {
      answer.append(bytes.toString(StandardCharsets.US_ASCII));
      bytes.release();
    }
    channel.finishAndReleaseAll();
    return answer.toString();
  }

}
