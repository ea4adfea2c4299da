package io.relay.topic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.TestClusterConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A node's status answer crosses Artery, whose maximum frame size (256 KiB) one report of a
 * thousand connections already exceeds: the node answers in parts, and every part, with the
 * largest fields and a node's recent events, stays under half a frame (checked with Pekko's own
 * serializer, on incompressible text).
 */
class NodeReportSizeTest {
  private static final ActorTestKit KIT =
      ActorTestKit.create(
          "relay",
          TestClusterConfig.get());
  private static final long FRAME = KIT.system().settings().config().getBytes("pekko.remote.artery.advanced.maximum-frame-size");
  private static final String NODE = "pekko://relay@" + "h".repeat(64) + ":25520";

  private final Random random = new Random(7);

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void aNodeWithThousandsOfTheLargestConnectionsAnswersInPartsUnderHalfAFrame() {
    List<ConnectionReport> reports = new ArrayList<>();
    for (int i = 0; i < 3_000; i++) {
      reports.add(report(text(256), text(128), text(512)));
    }
    List<List<ConnectionReport>> parts = ConnectionReport.inParts(reports, ConnectionReport.PART_BYTES);
    List<ClusterEvent> events = new ArrayList<>();
    for (int i = 0; i < TopicRegistry.RECENT_EVENTS; i++) {
      events.add(new ClusterEvent("2026-01-01T00:00:00.000000Z", NODE, "eviction", text(256), text(200)));
    }
    assertEquals(reports.size(), parts.stream().mapToInt(List::size).sum(), "every report is in a part");
    long largest = 0;
    for (int i = 0; i < parts.size(); i++) {
      largest = Math.max(largest, bytes(new TopicRegistry.NodeReport(NODE, parts.get(i), i == 0 ? events : List.of(), i, parts.size())));
    }
    System.out.printf("3,000 of the largest reports: %d parts, the largest %d bytes of a %d-byte frame%n", parts.size(), largest, FRAME);
    assertTrue(largest <= FRAME / 2, "a part takes " + largest + " bytes of a " + FRAME + "-byte frame");
    long whole = bytes(new TopicRegistry.NodeReport(NODE, reports, events, 0, 1));
    assertTrue(whole > FRAME, "one answer of 3,000 reports (" + whole + " bytes) would not fit a frame");
  }

  @Test
  void aNodeWithoutConnectionsAnswersWithOneEmptyPart() {
    assertEquals(List.of(List.of()), ConnectionReport.inParts(List.of(), ConnectionReport.PART_BYTES));
  }

  private ConnectionReport report(String topic, String booking, String userAgent) {
    ConnectionReport.Direction direction = new ConnectionReport.Direction(123456.789, 1048576.5, 9999.999);
    return new ConnectionReport(
        topic, NODE, booking, true, true, "2026-01-01T00:00:00.000000Z", "2026-01-01T01:00:00.000000Z",
        "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", userAgent, List.of("read", "write", "relay:admin", "relay:stats"),
        new ConnectionReport.Stats(direction, direction, Long.MAX_VALUE));
  }

  private String text(int length) {
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append((char) ('!' + random.nextInt(94)));
    }
    return text.toString();
  }

  private static long bytes(Object message) {
    return SerializationExtension.get(Adapter.toClassic(KIT.system())).serialize(message).get().length;
  }
}
