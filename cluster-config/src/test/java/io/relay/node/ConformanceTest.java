package io.relay.node;

import org.junit.jupiter.api.BeforeAll;

/** {@link ConformanceCases} over plain TCP, on the node's own sockets. */
class ConformanceTest extends ConformanceCases {
  @BeforeAll
  void start() {
    node = TestNode.start(SETTINGS);
    access = new AccessClient(node);
  }
}
