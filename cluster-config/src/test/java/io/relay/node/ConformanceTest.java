package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@link ConformanceCases} over plain TCP, on the node's own sockets. */
class ConformanceTest extends ConformanceCases {
  @BeforeAll
  void start() {
    node = TestNode.start(SETTINGS);
    access = new AccessClient(node);
  }

  @Test
  void framesInTheSameSegmentAsTheUpgradeRequestAreNotLost() throws Exception {
    String topic = newTopic();
    try (RawWebSocket reader = open(topic, "read");
        RawWebSocket writer = open(topic, RawWebSocket.frame(RawWebSocket.TEXT, true, "early".getBytes()), "write")) {
      assertEquals("early", reader.next("the frame sent with the upgrade request").text());
    }
  }
}
