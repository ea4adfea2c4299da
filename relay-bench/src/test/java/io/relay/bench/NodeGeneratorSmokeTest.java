package io.relay.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A few seconds of the independent generator (relay-bench/node: Node.js and ws, two processes)
 * against a real node JVM through its access API: every reader gets messages, nothing is lost or
 * reordered, and its result is the JSON line relay-bench/run's report reads. It needs node and
 * Debian's node-ws (.ci/run installs them) and fails, saying so, without them.
 */
class NodeGeneratorSmokeTest extends OnASmokeNode {
  private static final long RUN_DEADLINE_SECONDS = 120;
  private static final Path SCRIPT = Path.of(System.getProperty("basedir", "."), "node", "bench.js");

  @TempDir Path out;

  @Override
  SmokeNode start(Path dir) throws Exception {
    return new SmokeNode(dir, null);
  }

  @Test
  void aShortFanOutRunDeliversToEveryReaderInOrder() throws Exception {
    JsonNode r = run("W1", "--topics", "3", "--duration", "2", "--warmup", "1");
    assertDeliveredInOrder(r);
    assertEquals("node-ws", r.get("generator").asText(), "the result names its generator: " + r);
    assertEquals(15, r.get("connections").asLong(), "3 topics of 1 writer and 4 readers: " + r);
    assertEquals(12, r.get("readersReceiving").asLong(), "every reader received messages: " + r);
    assertEquals(0, r.get("closedConnections").asLong(), "connections closed: " + r);
    assertTrue(r.get("connectP50Ms").asDouble() > 0, "connect time measured: " + r);
  }

  @Test
  void aShortChatRunDeliversBothWays() throws Exception {
    JsonNode r = run("W2", "--topics", "4", "--duration", "2", "--warmup", "1");
    assertDeliveredInOrder(r);
    assertEquals(8, r.get("readersReceiving").asLong(), "both participants of every topic received the other's messages: " + r);
  }

  @Test
  void aShortClosedLoopStreamDeliversInOrder() throws Exception {
    JsonNode r = run("W3", "--duration", "2", "--warmup", "1");
    assertDeliveredInOrder(r);
    assertEquals(1, r.get("readersReceiving").asLong(), "the reader received messages: " + r);
  }

  @Test
  void aShortLadderPassesBothSteps() throws Exception {
    // delivery decides a step here, not a latency on a shared machine
    JsonNode r = run("W4", "--topics", "3", "--rates", "10,20", "--step-seconds", "1", "--warmup", "1", "--p99-limit-ms", "60000");
    assertEquals(20.0, r.get("highestPassingRate").asDouble(), "both steps deliver at these rates: " + r);
    assertEquals(2, r.get("steps").size(), "one result per step: " + r);
    assertEquals(0, r.get("lostTotal").asLong(), "lost frames: " + r);
  }

  /** Runs the Node generator against the test's node; returns the JSON line it appended to --json. */
  private JsonNode run(String workload, String... more) throws Exception {
    Path json = out.resolve(workload + ".jsonl");
    List<String> command = new ArrayList<>(List.of("node", SCRIPT.toString(), "--target", "relay", "--workload", workload));
    command.addAll(node.accessOptions());
    command.addAll(List.of("--server-pid", Long.toString(node.pid()), "--json", json.toString()));
    command.addAll(List.of(more));
    Path stdout = out.resolve(workload + ".out");
    Path stderr = out.resolve(workload + ".err");
    Process p;
    try {
      p = new ProcessBuilder(command).redirectOutput(stdout.toFile()).redirectError(stderr.toFile()).start();
    } catch (IOException e) {
      return fail("node is missing (apt-get install nodejs node-ws; .ci/run installs them): " + e.getMessage());
    }
    if (!p.waitFor(RUN_DEADLINE_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail("the Node generator did not finish " + workload + " within " + RUN_DEADLINE_SECONDS + " s; it wrote: " + Files.readString(stderr));
    }
    assertEquals(0, p.exitValue(), "the Node generator's exit status (without ws it says so: apt-get install node-ws); it wrote: " + Files.readString(stderr));
    List<String> lines = Files.readAllLines(json);
    assertEquals(1, lines.size(), "one JSON line per run in " + json);
    JsonNode r = new ObjectMapper().readTree(lines.get(0));
    assertEquals(workload, r.get("workload").asText(), "the result's workload: " + r);
    return r;
  }
}
