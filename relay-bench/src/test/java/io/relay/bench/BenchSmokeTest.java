package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A few seconds of the load generator against a real node JVM over ws: it must report traffic,
 * and nothing lost or reordered. No timing is asserted; the figures are printed only. Over wss:
 * {@link BenchSmokeTlsTest}.
 */
class BenchSmokeTest extends OnASmokeNode {
  @Override
  SmokeNode start(Path dir) throws Exception {
    return new SmokeNode(dir, null);
  }

  @Test
  void theDefaultKeyIsTheNodesDevelopmentKey() {
    assertEquals(io.relay.http.HttpSettings.DEV_SECRET, BenchCommand.DEV_SECRET);
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
  void aSmallConnectStormAdmitsEveryParticipantAndReportsOnlyTheMeasuredStorms() throws Exception {
    node.bench("W6", "--connections", "30", "--concurrency", "8", "--warmup-storms", "1", "--storms", "2");
    List<JsonNode> storms = node.results("W6");
    assertEquals(2, storms.size(), "one result per measured storm, none for the warm-up: " + storms);
    for (JsonNode storm : storms) {
      assertEquals(30, storm.get("admitted").asLong(), "every participant admitted: " + storm);
      assertEquals(0, storm.get("failures").size(), "no failures: " + storm);
      assertTrue(storm.get("admittedPerS").asDouble() > 0, "a rate reported: " + storm);
      assertTrue(storm.get("settleSeconds").asDouble() >= 0, "the node was quiet again after the storm's closes: " + storm);
    }
  }

  @Test
  void anIdleRunReportsTheNodesMemoryPerConnectionAndWhereItIs() throws Exception {
    // enough that what the connections keep (a few KB each) stands out of the heap's noise
    int connections = 1000;
    JsonNode r =
        node.bench("W5", "--connections", Integer.toString(connections), "--warmup", "1", "--jvm-pid", Long.toString(node.pid()));
    assertEquals(connections, r.get("openConnections").asLong(), "every idle connection open: " + r);
    assertEquals(connections / 5, r.get("warmupConnections").asLong(), "a fifth as many opened and closed before the baseline: " + r);
    assertTrue(r.get("heapPerConnectionKB").asDouble() > 0, "the live heap grew with the connections: " + r);
    double split = 0;
    for (String part : List.of("heapPagesPerConnectionKB", "compiledPerConnectionKB", "otherNativePerConnectionKB")) {
      assertTrue(r.hasNonNull(part), part + " reported for a JVM node: " + r);
      split += r.get(part).asDouble();
    }
    // the split reads smaps a moment after the RSS is read from status: within 256 KB in all
    assertEquals(r.get("rssPerConnectionKB").asDouble(), split, 256.0 / connections, "the split accounts for the RSS growth: " + r);
  }

  @Test
  void aShortLadderReportsWhatTheNodeCountedInEachStepAndPastTheLast() throws Exception {
    JsonNode r =
        node.bench(
            "W4", "--topics", "3", "--rates", "10,20", "--step-seconds", "1", "--warmup", "1", "--metrics", node.metricsUrl(),
            "--jvm-pid", Long.toString(node.pid()),
            "--p99-limit-ms", "60000"); // delivery decides a step here, not a latency on a shared machine
    assertEquals(20.0, r.get("highestPassingRate").asDouble(), "both steps deliver at these rates: " + r);
    JsonNode over = r.get("overload");
    assertEquals(40.0, over.get("rate").asDouble(), "the step past the ladder runs at twice its highest passing rate: " + over);
    assertEquals(over.get("connections").asLong(), over.get("openConnections").asLong(), "every connection open: " + over);
    assertEquals(0, over.get("serverDroppedFrames").asLong(), "nothing dropped at 40 frames a second: " + over);
    assertTrue(over.get("serverGcSeconds").asDouble() >= 0, "the node's time in garbage collection is read from its JVM metrics: " + over);
    for (JsonNode step : r.get("steps")) {
      assertTrue(step.get("serverLoopDelaysOver50ms").asLong() >= 0, "the node's event loop delays are read from its metrics: " + step);
      assertTrue(step.hasNonNull("generatorSendLateMaxMs"), "the generator's lateness is reported: " + step);
      assertTrue(step.get("serverHeapMB").asDouble() > 0, "the node's heap after the step: " + step);
    }
  }

  @Test
  void aShortChatRunDeliversBothWays() throws Exception {
    assertDeliveredInOrder(node.bench("W2", "--topics", "4", "--duration", "2", "--warmup", "1"));
  }
}
