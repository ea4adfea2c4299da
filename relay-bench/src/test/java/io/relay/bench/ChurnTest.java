package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The churn of short-lived readers against a real node JVM (which checks its buffer accounting as
 * the tests do): every frame each reader received is its topic's, whole and in order, while
 * readers close abruptly and with close frames, stop reading, sessions end and new ones start,
 * and a booking is denied and allowed. A CI-sized run; the full one is a command in docs/data-path.md.
 */
class ChurnTest extends OnASmokeNode {
  @Override
  SmokeNode start(Path dir) throws Exception {
    return new SmokeNode(dir, null);
  }

  @Test
  void everyFrameAReaderReceivesIsItsTopicsIntactWhileReadersChurn() throws Exception {
    JsonNode r =
        node.churn(
            30, "--topics", "16", "--readers", "4", "--rate", "50", "--min-life-ms", "200", "--max-life-ms", "2000",
            "--slow-ms", "3000", "--deny-every", "6", "--deny-for", "2", "--session-seconds", "8");
    assertTrue(r.get("framesReceived").asLong() > 10_000, "readers received frames: " + r);
    assertTrue(r.get("readerConnections").asLong() > 500, "readers churned: " + r);
    assertTrue(r.get("sessions").asLong() > 32, "sessions ended and new ones took their places: " + r);
    assertTrue(r.get("abruptCloses").asLong() > 100, "readers destroyed their sockets: " + r);
    assertTrue(r.get("denies").asLong() >= 3, "bookings were denied: " + r);
    assertTrue(r.get("closedByDeny").asLong() > 0, "denies closed connections: " + r);
    assertEquals(0, r.get("foreign").asLong(), "frames of another topic: " + r);
    assertEquals(0, r.get("corrupt").asLong(), "bytes that are no writer's frame: " + r);
    assertEquals(0, r.get("gaps").asLong(), "frames missing from a reader that kept reading: " + r);
    assertEquals(0, r.get("reordered").asLong(), "frames out of order: " + r);
    assertEquals(0, r.get("nodeBufferFaults").asDouble(), "the node's buffer accounting faults: " + r);
  }

  @Test
  void aFrameIsIntactOnlyWithItsOwnTopicSequenceLengthAndBytes() {
    ByteBuffer frame = Churn.frame(3, 77, 5000);
    byte[] bytes = new byte[5000];
    frame.get(bytes);
    assertTrue(Churn.intact(bytes, 5000, 3, 77));
    assertFalse(Churn.intact(bytes, 5000, 4, 77), "another topic's");
    assertFalse(Churn.intact(bytes, 5000, 3, 78), "another sequence number");
    assertFalse(Churn.intact(bytes, 4999, 3, 77), "cut short");
    bytes[4000] ^= 1;
    assertFalse(Churn.intact(bytes, 5000, 3, 77), "one byte changed");
  }
}
