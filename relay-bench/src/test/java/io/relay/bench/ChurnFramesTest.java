package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * The churn's frames: a reader tells its topic's intact frame from another topic's and from
 * changed bytes. The churn itself runs through nginx against three nodes in every build ({@code
 * SoakIT}, in the harness).
 */
class ChurnFramesTest {
  @Test
  void aFrameIsIntactOnlyWithItsOwnTopicSequenceLengthAndBytes() {
    ByteBuffer frame = ChurnFrames.frame(3, 77, 5000);
    byte[] bytes = new byte[5000];
    frame.get(bytes);
    assertTrue(ChurnFrames.intact(bytes, 5000, 3, 77));
    assertFalse(ChurnFrames.intact(bytes, 5000, 4, 77), "another topic's");
    assertFalse(ChurnFrames.intact(bytes, 5000, 3, 78), "another sequence number");
    assertFalse(ChurnFrames.intact(bytes, 4999, 3, 77), "cut short");
    bytes[4000] ^= 1;
    assertFalse(ChurnFrames.intact(bytes, 5000, 3, 77), "one byte changed");
  }
}
