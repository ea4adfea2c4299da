package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.relay.testing.TestCertificate;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A few seconds of the load generator against a real node JVM, over ws and over wss: it must
 * report traffic, and nothing lost or reordered. No timing is asserted; the figures are printed
 * only.
 */
class BenchSmokeTest {
  @Test
  void theDefaultKeyIsTheNodesDevelopmentKey() {
    assertEquals(io.relay.http.HttpSettings.DEV_SECRET, BenchCommand.DEV_SECRET);
  }

  /** One node for a nested class's tests, started before them and stopped after them. */
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  abstract static class OnANode {
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
  }

  @Nested
  class Plain extends OnANode {
    @Override
    SmokeNode start(Path dir) throws Exception {
      return new SmokeNode(dir, null);
    }

    @Test
    void aShortFanOutRunDeliversEverythingInOrder() throws Exception {
      JsonNode r = node.bench("W1", "--topics", "3", "--duration", "2", "--warmup", "1");
      assertDeliveredInOrder(r);
      assertEquals(0, r.get("closedConnections").asLong(), "connections closed: " + r);
      assertEquals(15, r.get("connections").asLong(), "3 topics of 1 writer and 4 readers");
      assertEquals("ws", r.get("transport").asText());
    }

    @Test
    void aShortChatRunDeliversBothWays() throws Exception {
      assertDeliveredInOrder(node.bench("W2", "--topics", "4", "--duration", "2", "--warmup", "1"));
    }
  }

  @Nested
  class OverTls extends OnANode {
    @Override
    SmokeNode start(Path dir) throws Exception {
      return new SmokeNode(dir, TestCertificate.create(dir));
    }

    @Test
    void aShortFanOutRunOverWssDeliversEverythingInOrderWithTheOneSuite() throws Exception {
      JsonNode r = node.bench("W1", "--topics", "2", "--duration", "2", "--warmup", "1");
      assertDeliveredInOrder(r);
      assertEquals(10, r.get("connections").asLong(), "2 topics of 1 writer and 4 readers");
      assertEquals("wss", r.get("transport").asText());
      assertEquals(Tls.DEFAULT_SUITE, r.get("tlsSuite").asText(), "the suite both servers are measured with");
    }
  }

  private static void assertDeliveredInOrder(JsonNode r) {
    assertTrue(r.get("deliveredMsgPerS").asDouble() > 0, "delivered messages: " + r);
    assertTrue(r.get("p99Ms").asDouble() > 0, "latency measured: " + r);
    assertEquals(0, r.get("lostTotal").asLong(), "lost frames: " + r);
    assertEquals(0, r.get("reorderedTotal").asLong(), "reordered frames: " + r);
  }
}
