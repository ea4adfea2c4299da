package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A page of another origin calls the access API the way practable's pages do (a POST with the raw
 * token in Authorization and a JSON body), in real Chromium: from an allowed origin it gets its
 * one-time URI; from another origin the browser blocks the call at its preflight, and no code is
 * issued. The page is served by a JDK HTTP server on another loopback port; {@code
 * http://127.0.0.1:P} is allowed, {@code http://localhost:P} (the same server, another origin) is
 * not.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CorsBrowserIT {
  private static final String TOPIC = "lab/cors";
  /** What the page runs: the call, and its outcome handed back to the test. */
  private static final String FETCH =
      "const [url, token, done] = arguments;"
          + "fetch(url, {method: 'POST', headers: {'Authorization': token, 'Content-Type': 'application/json'},"
          + " body: JSON.stringify({client: 'cors-page'})})"
          + ".then(r => r.json().then(body => done({status: r.status, uri: body.uri || ''})))"
          + ".catch(e => done({status: 0, error: String(e)}));";

  private HttpServer pages;
  private int pagePort;
  private TestNode node;
  private Browser browser;

  @BeforeAll
  void start() throws IOException {
    pages = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    pages.createContext("/", exchange -> {
      byte[] page = "<!doctype html><title>practable page</title><p>another origin</p>".getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "text/html; charset=utf-8");
      exchange.sendResponseHeaders(200, page.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(page);
      }
    });
    pages.start();
    pagePort = pages.getAddress().getPort();
    node = TestNode.start(Map.of("relay.cors-origins", "http://127.0.0.1:" + pagePort));
    browser = new Browser();
  }

  @AfterAll
  void stop() {
    if (browser != null) {
      browser.close();
    }
    if (node != null) {
      node.close();
    }
    pages.stop(0);
  }

  @SuppressWarnings("unchecked")
  private Map<String, Object> callFrom(String pageOrigin) {
    browser.driver.get(pageOrigin + "/");
    String token = Tokens.sign(Tokens.session(TOPIC, List.of("read", "write"), "booking-cors").build());
    return (Map<String, Object>) browser.driver.executeAsyncScript(FETCH, node.access("/session/" + TOPIC).toString(), token);
  }

  @Test
  void aPageOfAnAllowedOriginGetsItsUri() {
    Map<String, Object> result = callFrom("http://127.0.0.1:" + pagePort);
    assertEquals(200L, result.get("status"), "the page's call failed: " + result.get("error"));
    String uri = (String) result.get("uri");
    assertTrue(
        Pattern.matches("ws://127\\.0\\.0\\.1:" + node.relayPort + "/session/lab/cors\\?code=[A-Za-z0-9_-]{32}", uri),
        "the page read a relay URI for its topic");
  }

  @Test
  void aPageOfAnotherOriginIsBlockedByTheBrowser() {
    double issued = node.metric("relay_codes_issued_total");
    Map<String, Object> result = callFrom("http://localhost:" + pagePort);
    assertEquals(0L, result.get("status"), "the browser let the page read the answer");
    assertTrue(String.valueOf(result.get("error")).contains("Failed to fetch"), "a network error: " + result.get("error"));
    assertEquals(issued, node.metric("relay_codes_issued_total"), "the POST never reached the node: its preflight was refused");
  }
}
