package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** RFC 9112 sections 2 to 5: reading a request head, as a port that serves only upgrades does. */
class RequestHeadTest {
  private static final String UPGRADE =
      "GET /session/lab/a?code=abc%2Bd+e HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\n"
          + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static RequestHead parse(String head) throws RequestHead.Malformed {
    byte[] bytes = bytes(head);
    int end = new RequestHead.Scanner().end(bytes, bytes.length);
    assertEquals(bytes.length, end, "the head ends at its empty line");
    return RequestHead.parse(bytes, end);
  }

  private static void assertRefused(int status, String head) {
    RequestHead.Malformed e = assertThrows(RequestHead.Malformed.class, () -> parse(head), head);
    assertEquals(status, e.status(), e.getMessage());
  }

  @Test
  void anUpgradeRequestIsReadWithItsPathQueryAndFields() throws Exception {
    RequestHead head = parse(UPGRADE);
    assertEquals("GET", head.method());
    assertEquals("HTTP/1.1", head.version());
    assertEquals("/session/lab/a", head.path());
    assertEquals("abc+d e", head.query("code"), "percent-escapes decoded, + a space");
    assertNull(head.query("other"));
    assertEquals("websocket", head.header("upgrade"), "names are case-insensitive");
    assertEquals(1, head.count("HOST"));
    assertNull(head.header("Origin"));
  }

  @Test
  void theEndIsFoundWhereverTheBytesAreSplit() throws Exception {
    // a client may send its head a byte at a time: the scanner looks at each byte once
    byte[] all = bytes("\r\n" + UPGRADE + "first frame");
    int headEnd = UPGRADE.length() + 2;
    for (int split = 1; split < headEnd; split += 7) {
      RequestHead.Scanner scanner = new RequestHead.Scanner();
      assertEquals(-1, scanner.end(all, split), "split at " + split);
      assertEquals(headEnd, scanner.end(all, all.length), "split at " + split);
    }
  }

  @Test
  void bareLineFeedsEndLinesAndLeadingEmptyLinesAreSkipped() throws Exception {
    // section 2.2: a recipient MAY recognise a single LF; SHOULD ignore empty lines before the request line
    RequestHead head = parse("\r\n\nGET /x HTTP/1.1\nHost: a\n\n");
    assertEquals("/x", head.path());
    assertEquals("a", head.header("Host"));
  }

  @Test
  void repeatedFieldsAreJoinedWithCommas() throws Exception {
    // RFC 9110 section 5.3
    RequestHead head = parse("GET / HTTP/1.1\r\nConnection: keep-alive\r\nconnection: Upgrade\r\n\r\n");
    assertEquals("keep-alive, Upgrade", head.header("Connection"));
    assertEquals(2, head.count("Connection"));
  }

  @Test
  void fieldValuesAreTrimmedOfOptionalWhitespace() throws Exception {
    assertEquals("v", parse("GET / HTTP/1.1\r\nName: \t v \t\r\n\r\n").header("Name"));
    assertEquals("", parse("GET / HTTP/1.1\r\nEmpty:\r\n\r\n").header("Empty"));
  }

  @Test
  void aMalformedRequestLineIs400() {
    assertRefused(400, "GET /x\r\n\r\n");
    assertRefused(400, "GET  /x HTTP/1.1\r\n\r\n");
    assertRefused(400, "G(T /x HTTP/1.1\r\n\r\n");
    assertRefused(400, "GET /x HTTP/1\r\n\r\n");
    assertRefused(400, "GET /x http/1.1\r\n\r\n");
    assertRefused(400, "GET /x HTTP/1.1x\r\n\r\n");
    assertRefused(400, "GET /x HTTP/1x1\r\n\r\n");
    assertRefused(400, "GET /x HTTP/a.1\r\n\r\n");
    assertRefused(400, "GET /x HTTP/1.b\r\n\r\n");
  }

  @Test
  void onlyOriginFormTargetsOfUriCharactersAreServed() {
    // section 3.2.1; RFC 3986 section 2
    assertRefused(400, "GET http://relay/x HTTP/1.1\r\n\r\n");
    assertRefused(400, "GET * HTTP/1.1\r\n\r\n");
    assertRefused(400, "GET /a\"b HTTP/1.1\r\n\r\n");
    assertRefused(400, "GET /a#frag HTTP/1.1\r\n\r\n");
    assertRefused(400, "GET /caf\u00e9 HTTP/1.1\r\n\r\n");
  }

  @Test
  void aBadPercentEscapeInTheQueryIs400() throws Exception {
    RequestHead head = parse("GET /x?code=%G1 HTTP/1.1\r\n\r\n");
    assertEquals(400, assertThrows(RequestHead.Malformed.class, () -> head.query("code")).status());
    RequestHead truncated = parse("GET /x?code=%4 HTTP/1.1\r\n\r\n");
    assertEquals(400, assertThrows(RequestHead.Malformed.class, () -> truncated.query("code")).status());
  }

  @Test
  void aVersionOtherThanOnePointSomethingIs505() {
    assertRefused(505, "GET /x HTTP/2.0\r\n\r\n");
    assertRefused(505, "GET /x HTTP/0.9\r\n\r\n");
  }

  @Test
  void whitespaceBeforeTheColonFoldingControlsAndBareCarriageReturnsAre400() {
    assertRefused(400, "GET / HTTP/1.1\r\nHost : a\r\n\r\n"); // section 5.1
    assertRefused(400, "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n"); // section 5.2
    assertRefused(400, "GET / HTTP/1.1\r\nA: b\u0001c\r\n\r\n");
    assertRefused(400, "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n"); // section 2.2
    assertRefused(400, "GET / HTTP/1.1\r\nno colon\r\n\r\n");
    assertRefused(400, "GET / HTTP/1.1\r\n: no name\r\n\r\n");
  }

  @Test
  void aLongTargetIs414AndTooManyFieldsAre431() {
    assertRefused(414, "GET /" + "a".repeat(RequestHead.MAX_TARGET_BYTES) + " HTTP/1.1\r\n\r\n");
    assertRefused(431, "GET / HTTP/1.1\r\n" + "A: b\r\n".repeat(RequestHead.MAX_FIELDS + 1) + "\r\n");
  }

  @Test
  void aHeadThatDoesNotEndWithinTheLimitIs431OrIfItsRequestLineDoesNot414() throws Exception {
    byte[] fields = bytes(("GET / HTTP/1.1\r\n" + "A: b\r\n".repeat(5000)).substring(0, RequestHead.MAX_HEAD_BYTES));
    RequestHead.Scanner scanner = new RequestHead.Scanner();
    assertEquals(-1, scanner.end(fields, RequestHead.MAX_HEAD_BYTES - 1));
    assertEquals(431, assertThrows(RequestHead.Malformed.class, () -> scanner.end(fields, fields.length)).status());
    byte[] line = bytes("GET /" + "a".repeat(RequestHead.MAX_HEAD_BYTES));
    assertEquals(
        414, assertThrows(RequestHead.Malformed.class, () -> new RequestHead.Scanner().end(line, RequestHead.MAX_HEAD_BYTES)).status());
  }
}
