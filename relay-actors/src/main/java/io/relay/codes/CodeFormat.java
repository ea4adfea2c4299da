package io.relay.codes;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.OptionalLong;

/**
 * A one-time code's text: 128 bits of randomness and the unique id of the node that minted it,
 * URL-safe Base64 without padding (32 characters). The id lets any node find a code's issuer
 * before gossip has brought the code.
 */
final class CodeFormat {
  private static final int RANDOM_BYTES = 16;
  /** The random part and the issuing node's unique id (a long). */
  private static final int CODE_BYTES = RANDOM_BYTES + Long.BYTES;
  private static final int CODE_LENGTH = (CODE_BYTES * 8 + 5) / 6;

  private final SecureRandom random = new SecureRandom();
  private final long issuerUid;

  /** Mints codes of the node whose unique id is {@code issuerUid}. */
  CodeFormat(long issuerUid) {
    this.issuerUid = issuerUid;
  }

  String newCode() {
    byte[] bytes = new byte[RANDOM_BYTES];
    random.nextBytes(bytes);
    ByteBuffer code = ByteBuffer.allocate(CODE_BYTES).put(bytes).putLong(issuerUid);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(code.array());
  }

  /** The unique id of the node that minted {@code code}, or empty when it is not a code of this form. */
  static OptionalLong issuerOf(String code) {
    if (code.length() != CODE_LENGTH) {
      return OptionalLong.empty();
    }
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(code);
    } catch (IllegalArgumentException notBase64) {
      return OptionalLong.empty();
    }
    // padding ('=') makes text of the same length decode to fewer bytes
    return bytes.length == CODE_BYTES ? OptionalLong.of(ByteBuffer.wrap(bytes).getLong(RANDOM_BYTES)) : OptionalLong.empty();
  }
}
