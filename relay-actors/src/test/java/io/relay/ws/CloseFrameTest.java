package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** RFC 6455 sections 5.5.1 and 7.4: the close frames a peer may send. */
class CloseFrameTest {
  private static byte[] body(int code, byte... reason) {
    byte[] body = new byte[2 + reason.length];
    body[0] = (byte) (code >> 8);
    body[1] = (byte) code;
    System.arraycopy(reason, 0, body, 2, reason.length);
    return body;
  }

  @Test
  void anEmptyBodyIsACloseWithoutACode() {
    assertEquals(new CloseFrame(CloseFrame.NO_CODE, ""), CloseFrame.parse(new byte[0]));
  }

  @Test
  void aOneByteBodyIsInvalid() {
    assertNull(CloseFrame.parse(new byte[] {0x03}));
  }

  @Test
  void codesDefinedForTheWireAndTheApplicationRangesAreAccepted() {
    for (int code : new int[] {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999}) {
      assertNotNull(CloseFrame.parse(body(code)), "code " + code);
    }
  }

  @Test
  void reservedLocalAndUndefinedCodesAreInvalid() {
    for (int code : new int[] {0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535}) {
      assertNull(CloseFrame.parse(body(code)), "code " + code);
    }
  }

  @Test
  void theReasonMustBeUtf8() {
    assertEquals("bye ✓", CloseFrame.parse(body(1000, "bye ✓".getBytes(StandardCharsets.UTF_8))).reason());
    assertNull(CloseFrame.parse(body(1000, (byte) 0xCE, (byte) 0xBA, (byte) 0xE1, (byte) 0x80, (byte) 0x28)));
  }
}
