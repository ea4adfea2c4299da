package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A smoke test class's node: started before its tests and stopped after them, and the checks
 * every short run of the generator must pass. The ws and wss classes run in test JVMs of their
 * own, side by side.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OnASmokeNode {
  SmokeNode node;

  abstract SmokeNode start(Path dir) throws Exception;

  @BeforeAll
  void startNode(@TempDir Path dir) throws Exception {
    node = start(dir);
  }

  @AfterAll
  void stopNode() throws InterruptedException {
    if (node != null) {
      node.close();
    }
  }

  static void assertDeliveredInOrder(JsonNode r) {
    assertTrue(r.get("deliveredMsgPerS").asDouble() > 0, "delivered messages: " + r);
    assertTrue(r.get("p99Ms").asDouble() > 0, "latency measured: " + r);
    assertEquals(0, r.get("lostTotal").asLong(), "lost frames: " + r);
    assertEquals(0, r.get("reorderedTotal").asLong(), "reordered frames: " + r);
  }
}
