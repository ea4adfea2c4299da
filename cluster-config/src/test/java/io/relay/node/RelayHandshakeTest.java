package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The relay port's request heads as a client sees them, on a plain port where the node reads and
 * answers them itself: each refusal is a status, a one-line body and {@code Connection: close},
 * and the node then closes the connection; an upgrade from behind a proxy reports the client's
 * address and user agent.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RelayHandshakeTest {
  private static final String UPGRADE_FIELDS =
      "Host: relay\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
          + "Sec-WebSocket-Version: 13\r\n";

  @AutoClose private final TestNode node = TestNode.start(Map.of());
  private final AccessClient access = new AccessClient(node);

  /** Sends {@code head} and reads until the node closes the connection (10 s at most). */
  private String exchange(String head) throws IOException {
    URI relay = node.relay("/");
    try (Socket socket = new Socket(relay.getHost(), relay.getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      byte[] buffer = new byte[4096];
      for (int n; (n = in.read(buffer)) >= 0; ) {
        all.write(buffer, 0, n);
      }
      return all.toString(StandardCharsets.UTF_8);
    }
  }

  private void assertRefused(int status, String line, String head) throws IOException {
    String response = exchange(head);
    assertTrue(response.startsWith("HTTP/1.1 " + status + " "), "status " + status + " for " + head + ": " + response);
    assertTrue(response.contains("\r\nConnection: close\r\n"), response);
    assertTrue(response.contains("\r\nContent-Type: text/plain; charset=UTF-8\r\n"), response);
    String body = response.substring(response.indexOf("\r\n\r\n") + 4);
    assertTrue(body.endsWith("\n") && body.contains(line), "the body names the reason (" + line + "): " + body);
    int length = Integer.parseInt(response.replaceAll("(?s).*\r\nContent-Length: (\\d+)\r\n.*", "$1"));
    assertEquals(body.getBytes(StandardCharsets.UTF_8).length, length, "Content-Length is the body's");
  }

  private String code(String topic) {
    String uri = access.relayUri(topic, Tokens.session(topic, "read", "write"));
    return uri.substring(uri.indexOf("?code=") + 6);
  }

  @Test
  void requestsThatAreNotUpgradesOfSessionPathsAreRefused() throws IOException {
    assertRefused(404, "could not be found", "GET /other HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    assertRefused(404, "could not be found", "GET /sessions/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    assertTrue(exchange("POST /session/lab HTTP/1.1\r\nHost: relay\r\n\r\n").contains("\r\nAllow: GET\r\n"));
    assertRefused(405, "GET", "PUT /session/lab HTTP/1.1\r\nHost: relay\r\n\r\n");
    assertRefused(400, "path must be /session/{topic}", "GET /session HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    assertRefused(400, "topic must be", "GET /session/a%2Fb HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    assertRefused(400, "expected a WebSocket upgrade", "GET /session/lab HTTP/1.1\r\nHost: relay\r\n\r\n");
    assertRefused(400, "expected a WebSocket upgrade", "GET /session/lab HTTP/1.0\r\n" + UPGRADE_FIELDS + "\r\n");
    assertRefused(
        400, "expected a WebSocket upgrade", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS.replace("Host: relay\r\n", "") + "\r\n");
    assertRefused(400, "expected a WebSocket upgrade", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "Content-Length: 2\r\n\r\n{}");
    assertRefused(400, "expected a WebSocket upgrade", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    assertRefused(400, "expected a WebSocket upgrade", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "Content-Length: 00\r\n\r\n");
    assertRefused(400, "malformed request", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "Content-Length: 0\r\nContent-Length: 0\r\n\r\n");
    assertRefused(400, "malformed request", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    // a body of no bytes is none: the JDK's HTTP client of Java 17.0.15 says so in every upgrade, which goes on to its code
    assertRefused(401, "missing code", "GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS + "Content-Length: 0\r\n\r\n");
    String version8 = exchange("GET /session/lab HTTP/1.1\r\n" + UPGRADE_FIELDS.replace("Version: 13", "Version: 8") + "\r\n");
    assertTrue(version8.startsWith("HTTP/1.1 426 ") && version8.contains("\r\nSec-WebSocket-Version: 13\r\n"), version8);
  }

  @Test
  void headsTheNodeCannotReadAreRefusedWithTheirStatusAndCounted() throws IOException {
    double before = node.metric("relay_malformed_request_heads_total");
    assertRefused(400, "malformed request", "GET /session/lab\r\n\r\n");
    assertRefused(400, "malformed request", "GET /session/lab HTTP/1.1\r\nHost : relay\r\n\r\n");
    assertRefused(414, "too long", "GET /session/" + "a".repeat(3000) + " HTTP/1.1\r\n\r\n");
    assertRefused(431, "too many", "GET /session/lab HTTP/1.1\r\n" + "X-A: b\r\n".repeat(65) + "\r\n");
    assertRefused(431, "too large", "GET /session/lab HTTP/1.1\r\nX-A: " + "b".repeat(17_000) + "\r\n\r\n");
    assertRefused(431, "header field too large", "GET /session/lab HTTP/1.1\r\nX-A: " + "b".repeat(9_000) + "\r\n\r\n");
    assertRefused(414, "too long", "GET /session/lab?" + "a".repeat(17_000) + " HTTP/1.1\r\n\r\n");
    assertRefused(505, "not supported", "GET /session/lab HTTP/2.0\r\n\r\n");
    assertRefused(505, "not supported", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); // an HTTP/2 client's preface
    assertEquals(before + 9, node.metric("relay_malformed_request_heads_total"), "each unreadable head is counted");
  }

  @Test
  void codesAreCheckedAfterTheHandshakeAndRefusedWith401() throws IOException {
    assertRefused(401, "missing code", "GET /session/codes HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    assertRefused(401, "unknown code", "GET /session/codes?code=nope HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    // a code's length in padded Base64, which decodes to fewer bytes than a code holds
    assertRefused(401, "unknown code", "GET /session/codes?code=" + "A".repeat(30) + "%3D%3D HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    String code = code("codes"); // the node still issues codes after it
    assertRefused(401, "another topic", "GET /session/elsewhere?code=" + code + " HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
    String other = code("codes");
    assertTrue(exchangeUpgrade("GET /session/codes?code=" + other + " HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n").startsWith("HTTP/1.1 101 "));
    assertRefused(401, "already used", "GET /session/codes?code=" + other + " HTTP/1.1\r\n" + UPGRADE_FIELDS + "\r\n");
  }

  @Test
  void theNullSubprotocolIsSelectedWhenItIsAnEntryOfTheRequestedList() throws IOException {
    for (String requested : new String[] {"chat, null", "chat\r\nSec-WebSocket-Protocol: null"}) {
      String head = exchangeUpgrade("GET /session/sub?code=" + code("sub") + " HTTP/1.1\r\n" + UPGRADE_FIELDS + "Sec-WebSocket-Protocol: " + requested + "\r\n\r\n");
      assertTrue(head.startsWith("HTTP/1.1 101 ") && head.contains("\r\nSec-WebSocket-Protocol: null\r\n"), requested + ": " + head);
    }
    for (String requested : new String[] {"nullable", "Null", "chat"}) {
      String head = exchangeUpgrade("GET /session/sub?code=" + code("sub") + " HTTP/1.1\r\n" + UPGRADE_FIELDS + "Sec-WebSocket-Protocol: " + requested + "\r\n\r\n");
      assertTrue(head.startsWith("HTTP/1.1 101 ") && !head.contains("Sec-WebSocket-Protocol"), requested + ": " + head);
    }
  }

  /** Sends an upgrade and returns the response head, closing the connection after it. */
  private String exchangeUpgrade(String head) throws IOException {
    URI relay = node.relay("/");
    try (Socket socket = new Socket(relay.getHost(), relay.getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      StringBuilder response = new StringBuilder();
      InputStream in = socket.getInputStream();
      while (!response.toString().endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          break;
        }
        response.append((char) b);
      }
      return response.toString();
    }
  }

  @Test
  void anUpgradeFromBehindAProxyReportsTheClientsAddressAndUserAgent() throws IOException {
    String topic = "proxied";
    String head =
        "GET /session/" + topic + "?code=" + code(topic) + " HTTP/1.1\r\n" + UPGRADE_FIELDS
            + "X-Forwarded-For: 203.0.113.7, 10.0.0.1\r\nUser-Agent: lab-client/2\r\n\r\n";
    URI relay = node.relay("/");
    try (Socket socket = new Socket(relay.getHost(), relay.getPort())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(head.getBytes(StandardCharsets.ISO_8859_1));
      byte[] status = socket.getInputStream().readNBytes(12);
      assertEquals("HTTP/1.1 101", new String(status, StandardCharsets.US_ASCII));
      JsonNode[] report = {null};
      Await.until(
          "GET /status lists the proxied connection",
          Duration.ofSeconds(10),
          () -> {
            for (JsonNode r : access.get("/status", Tokens.admin("relay:stats")).body()) {
              if (r.get("topic").asText().equals(topic)) {
                report[0] = r;
              }
            }
            return report[0] != null;
          });
      assertEquals("203.0.113.7", report[0].get("remote_addr").asText(), "the first X-Forwarded-For entry");
      assertEquals("lab-client/2", report[0].get("user_agent").asText());
    }
  }
}
