package io.relay.ws;

import java.nio.charset.StandardCharsets;

/**
 * The body of a close frame (RFC 6455 section 5.5.1): a status code and a UTF-8 reason, both
 * optional, and the rules for which codes may appear on the wire (section 7.4).
 *
 * @param code the status code, or {@link #NO_CODE} when the frame carried none
 * @param reason the reason text, empty when there was none
 */
public record CloseFrame(int code, String reason) {
  /** Section 7.4.1: what an endpoint reports when a close frame carries no code; never sent. */
  public static final int NO_CODE = 1005;

  /**
   * Reads a peer's close frame body.
   *
   * @return the close, or null when the body is not a valid one: one byte long, a code that may
   *     not be sent, or a reason that is not UTF-8
   */
  public static CloseFrame parse(byte[] body) {
    if (body.length == 0) {
      return new CloseFrame(NO_CODE, "");
    }
    if (body.length == 1) {
      return null;
    }
    int code = ((body[0] & 0xFF) << 8) | (body[1] & 0xFF);
    if (!mayBeSent(code) || !Utf8Validator.isValid(body, 2, body.length - 2)) {
      return null;
    }
    return new CloseFrame(code, new String(body, 2, body.length - 2, StandardCharsets.UTF_8));
  }

  /**
   * Whether an endpoint may put {@code code} in a close frame (section 7.4): the codes RFC 6455
   * and the IANA registry define for use on the wire (1000-1003, 1007-1014), and the ranges for
   * libraries and applications (3000-4999). 1004 is reserved; 1005, 1006 and 1015 only ever
   * describe a close locally.
   */
  public static boolean mayBeSent(int code) {
    return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
  }
}
