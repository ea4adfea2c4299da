package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * Which requests skip the route tree (code requests, and not what the route should read), and
 * the answer past the admission gate: 503 at once, with Retry-After and the CORS headers the
 * route would give it, without taking a place or looking at the token.
 */
class CodeRequestsTest {
  private static final HttpSettings SETTINGS =
      HttpSettings.create(
          ConfigFactory.parseMap(Map.of("relay.secret", "code-requests-test-secret-0123456789", "relay.cors-origins", "http://page.test"))
              .withFallback(ConfigFactory.load()));

  private static FullHttpRequest request(String method, String uri, String... fields) {
    FullHttpRequest request = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(method), uri);
    request.headers().add("Host", "x");
    for (int i = 0; i < fields.length; i += 2) {
      request.headers().add(fields[i], fields[i + 1]);
    }
    return request;
  }

  @Test
  void codeRequestsAreTakenAndWhatTheRouteMustReadIsNot() {
    AtomicInteger refused = new AtomicInteger();
    AdmissionGate full = new AdmissionGate(0, refused::incrementAndGet);
    CodeRequests codes = new CodeRequests(null, full, new Cors(SETTINGS), Json.error(503, "busy"));
    assertNotNull(codes.answer(request("POST", "/session/lab/a", "Authorization", "t")));
    assertNotNull(codes.answer(request("POST", "/session")), "a bad path gets the route's JSON error from the same code");
    assertNull(codes.answer(request("GET", "/session/lab")), "other methods: the route's 405");
    assertNull(codes.answer(request("POST", "/sessions/lab")));
    assertNull(codes.answer(request("POST", "/bids/deny?bid=b&exp=1")));
    assertNull(codes.answer(request("POST", "/session/l%61b")), "percent-escapes: the route decodes them");
    assertNull(codes.answer(request("POST", "/session/lab", "Authorization", "a", "Authorization", "b")));
    assertNull(codes.answer(request("OPTIONS", "/session/lab", "Origin", "http://page.test")), "preflights: the route");
    assertEquals(2, refused.get(), "the two code requests met the full gate");
  }

  @Test
  void pastTheGateACodeRequestGets503AtOnceWithRetryAfterAndCors() throws Exception {
    AtomicInteger refused = new AtomicInteger();
    AdmissionGate gate = new AdmissionGate(1, refused::incrementAndGet);
    assertTrue(gate.tryEnter(), "the one place is taken");
    CodeRequests codes =
        new CodeRequests(null, gate, new Cors(SETTINGS), Json.error(503, "the node is admitting as many clients as it can; retry"));

    HttpResponse answer =
        codes
            .answer(request("POST", "/session/lab", "Origin", "http://page.test", "Authorization", "t"))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);

    assertEquals(503, answer.status().intValue());
    assertEquals("1", answer.getHeader("Retry-After").orElseThrow().value());
    assertEquals("http://page.test", answer.getHeader("Access-Control-Allow-Origin").orElseThrow().value());
    assertEquals("Origin", answer.getHeader("Vary").orElseThrow().value());
    assertEquals(1, refused.get(), "the refusal is counted");
    assertEquals(1, gate.inFlight(), "a refused request takes no place");
  }
}
