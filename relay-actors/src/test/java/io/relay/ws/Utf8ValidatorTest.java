package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** RFC 6455 section 8.1 and RFC 3629: what the relay takes for valid UTF-8 text. */
class Utf8ValidatorTest {
  private static boolean jdkAccepts(byte[] bytes) {
    try {
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes));
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }

  private static byte[] bytes(int... values) {
    byte[] bytes = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      bytes[i] = (byte) values[i];
    }
    return bytes;
  }

  @Test
  void textInEveryScriptIsValid() {
    byte[] text = "hello κόσμε, 你好, 🎉 and plain ASCII long enough for the eight-byte path".getBytes(StandardCharsets.UTF_8);
    assertTrue(Utf8Validator.isValid(text, 0, text.length));
  }

  @Test
  void overlongFormsSurrogatesAndCodePointsAbove10FFFFAreInvalid() {
    assertFalse(Utf8Validator.isValid(bytes(0xC0, 0xAF), 0, 2), "overlong '/'");
    assertFalse(Utf8Validator.isValid(bytes(0xE0, 0x80, 0xAF), 0, 3), "overlong '/' in three bytes");
    assertFalse(Utf8Validator.isValid(bytes(0xED, 0xA0, 0x80), 0, 3), "U+D800, a surrogate");
    assertFalse(Utf8Validator.isValid(bytes(0xF4, 0x90, 0x80, 0x80), 0, 4), "U+110000");
    assertFalse(Utf8Validator.isValid(bytes(0xFE), 0, 1), "a byte that never occurs");
    assertTrue(Utf8Validator.isValid(bytes(0xF4, 0x8F, 0xBF, 0xBF), 0, 4), "U+10FFFF, the last code point");
  }

  @Test
  void aTextCutInsideACodePointIsIncompleteNotInvalid() {
    Utf8Validator validator = new Utf8Validator();
    byte[] euro = "€".getBytes(StandardCharsets.UTF_8);
    assertTrue(validator.feed(euro, 0, 2), "the first two bytes of € can still become valid text");
    assertFalse(validator.isComplete(), "but the text is not complete");
    assertTrue(validator.feed(euro, 2, 1));
    assertTrue(validator.isComplete());
  }

  @Test
  void anInvalidByteIsFoundAsSoonAsItArrives() {
    Utf8Validator validator = new Utf8Validator();
    assertTrue(validator.feed("κόσμε".getBytes(StandardCharsets.UTF_8), 0, 10));
    assertFalse(validator.feed(bytes(0xCE, 0xBA, 0xE1, 0x80, 0x28), 0, 5), "0xE1 0x80 cannot be followed by '('");
    assertFalse(validator.feed(bytes('a'), 0, 1), "an invalid text stays invalid");
  }

  @Test
  void agreesWithTheJdksStrictDecoderOnRandomTextSplitAnywhere() {
    Random random = new Random(6455);
    int[] interesting = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
    for (int round = 0; round < 20_000; round++) {
      byte[] drawn = new byte[random.nextInt(24)];
      for (int i = 0; i < drawn.length; i++) {
        drawn[i] = (byte) (random.nextInt(3) == 0 ? random.nextInt(256) : interesting[random.nextInt(interesting.length)]);
      }
      // half the time valid text, to test acceptance as often as rejection
      byte[] text = random.nextBoolean() ? new String(drawn, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8) : drawn;
      boolean expected = jdkAccepts(text);
      int split = text.length == 0 ? 0 : random.nextInt(text.length + 1);
      Utf8Validator validator = new Utf8Validator();
      boolean valid = validator.feed(text, 0, split) && validator.feed(text, split, text.length - split) && validator.isComplete();
      assertEquals(expected, valid, () -> "validity of " + java.util.HexFormat.of().formatHex(text));
    }
  }
}
