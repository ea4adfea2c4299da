package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import io.relay.testing.TestCertificate;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The generator's smoke test over wss, against a node terminating TLS itself. */
class BenchSmokeTlsTest extends OnASmokeNode {
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
