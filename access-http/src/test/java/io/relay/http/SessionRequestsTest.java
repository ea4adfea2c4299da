package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.http.socket.OwnRequests;
import io.relay.http.socket.RequestHead;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Which requests a plain access port answers itself (code requests, and not what the route should
 * read), and the answer past the admission gate: 503 at once, with Retry-After, the JSON error and
 * the CORS headers the route would give it, without taking a place or looking at the token.
 */
class SessionRequestsTest {
  private static final HttpSettings SETTINGS =
      HttpSettings.create(
          ConfigFactory.parseMap(Map.of("relay.secret", "session-requests-test-secret-0123456789", "relay.cors-origins", "http://page.test"))
              .withFallback(ConfigFactory.load()));

  private static RequestHead head(String text) throws RequestHead.Malformed {
    byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
    return RequestHead.parse(bytes, bytes.length);
  }

  @Test
  void codeRequestsAreTakenAndWhatTheRouteMustReadIsNot() throws Exception {
    SessionRequests requests = new SessionRequests(null, new AdmissionGate(1, () -> {}), new Cors(SETTINGS), null);
    assertTrue(requests.takes(head("POST /session/lab/a HTTP/1.1\r\nHost: x\r\nAuthorization: t\r\n\r\n")));
    assertTrue(requests.takes(head("POST /session HTTP/1.1\r\nHost: x\r\n\r\n")), "a bad path gets the route's JSON error from the same code");
    assertFalse(requests.takes(head("GET /session/lab HTTP/1.1\r\nHost: x\r\n\r\n")), "other methods: the route's 405");
    assertFalse(requests.takes(head("POST /sessions/lab HTTP/1.1\r\nHost: x\r\n\r\n")));
    assertFalse(requests.takes(head("POST /bids/deny?bid=b&exp=1 HTTP/1.1\r\nHost: x\r\n\r\n")));
    assertFalse(requests.takes(head("POST /session/l%61b HTTP/1.1\r\nHost: x\r\n\r\n")), "percent-escapes: the route decodes them");
    assertFalse(requests.takes(head("POST /session/lab HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n")));
    assertFalse(requests.takes(head("OPTIONS /session/lab HTTP/1.1\r\nHost: x\r\nOrigin: http://page.test\r\n\r\n")), "preflights: the route");
  }

  @Test
  void pastTheGateACodeRequestGets503AtOnceWithRetryAfterAndCors() throws Exception {
    AtomicInteger refused = new AtomicInteger();
    AdmissionGate gate = new AdmissionGate(1, refused::incrementAndGet);
    assertTrue(gate.tryEnter(), "the one place is taken");
    SessionRequests requests =
        new SessionRequests(null, gate, new Cors(SETTINGS), Json.error(503, "the node is admitting as many clients as it can; retry"));

    OwnRequests.Answer answer =
        requests
            .answer(head("POST /session/lab HTTP/1.1\r\nHost: x\r\nOrigin: http://page.test\r\nAuthorization: t\r\n\r\n"), new InetSocketAddress(0))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);

    String response = new String(answer.response(), StandardCharsets.UTF_8);
    assertTrue(response.startsWith("HTTP/1.1 503 Service Unavailable\r\n"), response);
    assertTrue(response.contains("\r\nRetry-After: 1\r\n"), response);
    assertTrue(response.contains("\r\nAccess-Control-Allow-Origin: http://page.test\r\n"), response);
    assertTrue(response.contains("\r\nVary: Origin\r\n"), response);
    assertTrue(response.endsWith("\r\n\r\n{\"message\":\"the node is admitting as many clients as it can; retry\",\"code\":503}")
        || response.endsWith("\r\n\r\n{\"code\":503,\"message\":\"the node is admitting as many clients as it can; retry\"}"), response);
    assertTrue(answer.keepAlive(), "the client may retry on the same connection");
    assertEquals(1, refused.get(), "the refusal is counted");
    assertEquals(1, gate.inFlight(), "a refused request takes no place");
  }
}
