package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** RFC 6455 section 4.2: the server's side of the opening handshake. */
class HandshakeTest {
  /** The key of section 1.3's example. */
  private static final String KEY = "dGhlIHNhbXBsZSBub25jZQ==";

  @Test
  void aCompleteUpgradeHasNoProblem() {
    assertNull(Handshake.check("websocket", "Upgrade", KEY, "13"));
  }

  @Test
  void upgradeAndConnectionAreCaseInsensitiveTokensOfLists() {
    // section 4.2.1 items 3 and 4: "Upgrade ... containing the value 'websocket', treated as an
    // ASCII case-insensitive value"; "Connection ... that includes the token 'Upgrade'"
    assertNull(Handshake.check("WebSocket", "keep-alive, upgrade", KEY, "13"));
    assertNull(Handshake.check("h2c , websocket", "Upgrade ,keep-alive", KEY, " 13 "));
  }

  @Test
  void aMissingOrWrongUpgradeOrConnectionIsNotAnUpgrade() {
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check(null, "Upgrade", KEY, "13"));
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocketx", "Upgrade", KEY, "13"));
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", null, KEY, "13"));
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", "keep-alive", KEY, "13"));
  }

  @Test
  void theKeyMustDecodeToSixteenBytes() {
    // section 4.2.1 item 5
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", "Upgrade", null, "13"));
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", "Upgrade", "AAAA", "13"));
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", "Upgrade", "not base64 at all!!!!!==", "13"));
    assertEquals(
        Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", "Upgrade", "AAAAAAAAAAAAAAAAAAAAAAAA", "13"), "18 bytes");
  }

  @Test
  void anotherVersionIsTheVersionProblemAndNoVersionIsNotAnUpgrade() {
    // section 4.2.1 item 6 and section 4.4: 426 with the versions the server speaks
    assertEquals(Handshake.Problem.VERSION, Handshake.check("websocket", "Upgrade", KEY, "8"));
    assertEquals(Handshake.Problem.VERSION, Handshake.check(null, null, null, "12"), "the version is looked at first");
    assertEquals(Handshake.Problem.NOT_AN_UPGRADE, Handshake.check("websocket", "Upgrade", KEY, null));
    assertEquals(Handshake.Problem.VERSION, Handshake.check("websocket", "Upgrade", KEY, "7"));
    assertNull(Handshake.check("websocket", "Upgrade", KEY, " 13 "));
  }

  @Test
  void theAcceptValueIsTheExampleOfSectionOnePointThree() {
    assertEquals("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", Handshake.accept(KEY));
  }

  @Test
  void theSwitchingResponseCarriesTheAcceptValueAndTheSelectedProtocolOnly() {
    String plain = new String(Handshake.switching(KEY, null), StandardCharsets.US_ASCII);
    assertEquals(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n",
        plain);
    String withProtocol = new String(Handshake.switching(KEY, "null"), StandardCharsets.US_ASCII);
    assertTrue(withProtocol.endsWith("\r\nSec-WebSocket-Protocol: null\r\n\r\n"), withProtocol);
  }
}
