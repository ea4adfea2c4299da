package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import io.relay.testing.TestCertificate;
import io.relay.testing.Tokens;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a node logs of malformed requests that carry a live one-time code or a live token (a bad
 * byte in the request target or the Authorization header, illegal characters in the request line,
 * over-long heads), on plain and HTTPS ports: neither the code, nor the token, nor the query
 * string; and a flood of them is one line and a count per interval, not a line per request.
 */
class LogSecrecyTest {
  private static final String TOPIC = "lab/log";
  private static final Duration LIMIT_INTERVAL = Duration.ofSeconds(1);
  static final String REFUSED = "refused a request that could not be parsed";
  private static final Pattern COUNT = Pattern.compile("^(\\d+) more lines like \"" + REFUSED);

  @TempDir Path dir;
  private LogCapture log;

  @BeforeEach
  void capture() {
    log = new LogCapture();
  }

  @AfterEach
  void release() {
    log.close();
  }

  /** Requests that carry {@code code} and {@code token} and that Pekko HTTP cannot parse or that the node refuses. */
  static List<String> malformed(String code, String token) {
    String target = "/session/" + TOPIC + "?code=" + code;
    String head = " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    String oneBadByte = token.substring(0, 20) + "\u0001" + token.substring(21);
    String oneBadChar = token.substring(0, 20) + "\"" + token.substring(21);
    return List.of(
        "GET " + target + "{" + head + "\r\n",
        "GET " + target + "%zz" + head + "\r\n",
        "GET " + target + "\u00ff" + head + "\r\n",
        "GET " + target + " trailing" + head + "\r\n",
        "G\u0001T " + target + head + "\r\n",
        "GET " + target + " HTTP/1.7\r\nHost: 127.0.0.1\r\n\r\n",
        "GET " + target + head + "Authorization: " + oneBadByte + "\r\n\r\n",
        "GET " + target + head + "Authorization: Bearer " + oneBadChar + "\r\n\r\n",
        "POST /session/" + TOPIC + head + "Authorization: " + oneBadByte + "\r\nContent-Length: 0\r\n\r\n",
        "POST /session/" + TOPIC + head + "Authorization: " + oneBadChar + "\r\nContent-Length: 0\r\n\r\n",
        "POST /session/" + TOPIC + head + "Authorization: " + token + "\u007f\r\nContent-Length: 0\r\n\r\n",
        "GET " + target + head + "Authorization: " + token + "A".repeat(9000) + "\r\n\r\n",
        "GET " + target + "&pad=" + "a".repeat(3000) + head + "\r\n",
        "GET " + target + head + "X-Token\u0001: " + token + "\r\n\r\n",
        "GET " + target + head + token + "\r\n\r\n",
        "GET " + target + head + "Cookie: relay=" + oneBadByte + "\r\n\r\n",
        // the access API answers before the body has come: Pekko notes an early response, naming the target
        "POST " + target + head + "Authorization: " + token + "\r\nContent-Length: 1000\r\n\r\n{",
        // well formed, refused by the relay before any upgrade
        "GET " + target + head + "Authorization: " + token + "\r\n\r\n");
  }

  /** Sends every malformed request to both ports, and checks that the log holds nothing of them. */
  private void assertNothingOfThemLogged(TestNode node, SSLContext tls) {
    String token = Tokens.session(TOPIC, "read", "write");
    HttpClient http = tls == null ? HttpClient.newHttpClient() : HttpClient.newBuilder().sslContext(tls).build();
    String code = new AccessClient(node, http).relayUri(TOPIC, token).replaceAll(".*code=", "");
    List<String> answers = new ArrayList<>();
    for (int port : new int[] {node.accessPort, node.relayPort}) {
      for (String request : malformed(code, token)) {
        answers.add(RawHttp.exchange(port, tls, request));
      }
    }
    if (tls != null) {
      // plain text to a TLS port (a ws:// URL of a wss:// port): TLS refuses it, quoting what it read
      String plain = "GET /session/" + TOPIC + "?code=" + code + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
      RawHttp.exchange(node.accessPort, null, plain);
      RawHttp.exchange(node.relayPort, null, plain);
    }
    assertTrue(answers.stream().anyMatch(a -> a.contains(" 400 ")), "some requests were refused as malformed: " + answers);
    assertTrue(answers.stream().anyMatch(a -> a.contains(" 431 ")), "the over-long header was refused: " + answers);
    assertTrue(answers.stream().anyMatch(a -> a.contains(" 414 ")), "the over-long target was refused: " + answers);
    Await.until("the refusals are logged", Duration.ofSeconds(10), () -> !log.messagesContaining(REFUSED).isEmpty());
    // Pekko's own lines go through its logging actor: a line logged after them arrives after them
    node.system.classicSystem().log().warning("end of the malformed requests");
    Await.until("Pekko's log is written", Duration.ofSeconds(10), () -> !log.messagesContaining("end of the malformed requests").isEmpty());

    String text = log.text();
    String[] segments = token.split("\\.");
    assertFalse(text.contains(code), "the log holds the code");
    assertFalse(text.contains(HexFormat.of().formatHex(code.getBytes(StandardCharsets.US_ASCII))), "the log holds the code in hex");
    // Netty logs an exception that reaches its pipeline's tail with its message (the JDK's TLS
    // quotes the plain text it refused in hex), once per connection
    assertFalse(text.contains("reached at the tail of the pipeline"), "a client's failure reached Netty's pipeline tail: " + text);
    assertFalse(text.contains(segments[1]) || text.contains(segments[2]), "the log holds the token (or its claims or signature)");
    assertFalse(text.contains("code="), "the log holds a query string");
    assertFalse(text.contains("&pad="), "the log holds a query string");
  }

  @Test
  void plainPortsLogNeitherTheCodeNorTheTokenOfMalformedRequests() {
    try (TestNode node = TestNode.start(Map.of("relay.log-limit-interval", "1s"))) {
      assertNothingOfThemLogged(node, null);
    }
  }

  @Test
  void httpsPortsLogNeitherTheCodeNorTheTokenOfMalformedRequests() throws Exception {
    TestCertificate certificate = TestCertificate.create(dir);
    try (TestNode node = TestNode.start(certificate.nodeSettings(TestNode.freePort()))) {
      assertNothingOfThemLogged(node, certificate.trustingContext());
    }
  }

  @Test
  void aFloodOfMalformedRequestsIsOneLineAndACountPerInterval() {
    int sent = 40;
    try (TestNode node = TestNode.start(Map.of("relay.log-limit-interval", LIMIT_INTERVAL.toMillis() + "ms"))) {
      for (int i = 0; i < sent; i++) {
        String answer = RawHttp.exchange(node.relayPort, null, "GET /session/" + TOPIC + "?code=" + i + "{ HTTP/1.1\r\nHost: x\r\n\r\n");
        assertTrue(answer.contains(" 400 "), answer);
      }
      long[] accounted = new long[2];
      Await.until(
          "every refusal is logged or counted",
          Duration.ofSeconds(10),
          () -> {
            accounted[0] = log.messagesContaining(REFUSED).stream().filter(m -> m.startsWith(REFUSED)).count();
            accounted[1] = log.messagesContaining(REFUSED).stream().map(COUNT::matcher).filter(Matcher::find).mapToLong(m -> Long.parseLong(m.group(1))).sum();
            return accounted[0] + accounted[1] == sent;
          },
          () -> accounted[0] + " lines and " + accounted[1] + " counted");
      assertTrue(accounted[0] <= 3, "one line per interval, not one per request: " + accounted[0] + " lines for " + sent + " requests");
    }
  }
}
