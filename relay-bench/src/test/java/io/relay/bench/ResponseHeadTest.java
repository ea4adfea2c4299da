package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ResponseHeadTest {
  private static final byte[] POSTED =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 9\r\n\r\n{\"uri\":1}".getBytes(StandardCharsets.ISO_8859_1);

  @Test
  void findsTheEndOfTheHeadItsStatusAndItsBodysLength() {
    int end = ResponseHead.end(POSTED, POSTED.length);
    assertEquals(POSTED.length - 9, end, "just past the blank line");
    assertEquals(200, ResponseHead.status(POSTED, POSTED.length));
    assertEquals(9, ResponseHead.contentLength(POSTED, end), "the field's name in any case");
  }

  @Test
  void aHeadNotYetReadWholeHasNoEnd() {
    assertEquals(-1, ResponseHead.end(POSTED, 40));
    assertEquals(-1, ResponseHead.status(POSTED, 8), "not even the status line yet");
  }

  @Test
  void whatIsNotAnHttp11ResponseHasNoStatusAndAHeadWithoutALengthNone() {
    byte[] other = "SSH-2.0-OpenSSH\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
    assertEquals(-1, ResponseHead.status(other, other.length));
    assertEquals(-1, ResponseHead.contentLength(other, ResponseHead.end(other, other.length)));
  }
}
