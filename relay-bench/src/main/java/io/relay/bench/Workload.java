package io.relay.bench;

import java.util.List;

/**
 * A benchmark shape from the performance issue: how many topics, who writes and reads in each,
 * how big and how often the frames are.
 *
 * @param participants connections per topic that both write and read (chat), or 0
 * @param rate frames per second per topic (shared by a topic's participants); 0 = closed loop
 */
record Workload(
    String name,
    int topics,
    int writers,
    int readers,
    int participants,
    int size,
    double rate,
    List<Double> steps,
    Shape shape) {

  /** What a run does: frames flowing, connections held idle (W5), or a connect storm (W6). */
  enum Shape {
    TRAFFIC,
    IDLE,
    STORM
  }

  static Workload named(String name) {
    return switch (name.toUpperCase(java.util.Locale.ROOT)) {
      case "W1" -> new Workload("W1", 50, 1, 4, 0, 20 * 1024, 25, List.of(), Shape.TRAFFIC);
      case "W2" -> new Workload("W2", 200, 0, 0, 2, 100, 10, List.of(), Shape.TRAFFIC);
      case "W3" -> new Workload("W3", 1, 1, 1, 0, 64 * 1024, 0, List.of(), Shape.TRAFFIC);
      case "W4" ->
          new Workload("W4", 50, 1, 4, 0, 20 * 1024, 25, List.of(25.0, 50.0, 100.0, 200.0, 300.0, 400.0), Shape.TRAFFIC);
      case "W5" -> new Workload("W5", 2000, 1, 4, 0, 0, 0, List.of(), Shape.IDLE);
      case "W6" -> new Workload("W6", 1000, 1, 2, 0, 0, 0, List.of(), Shape.STORM);
      default -> throw new IllegalArgumentException("unknown workload " + name + " (W1 to W6)");
    };
  }

  Workload withTopics(int newTopics) {
    return new Workload(name, newTopics, writers, readers, participants, size, rate, steps, shape);
  }

  Workload withSteps(List<Double> newSteps) {
    return new Workload(name, topics, writers, readers, participants, size, rate, newSteps, shape);
  }

  /** How many readers receive each frame. */
  int fanOut() {
    return participants > 0 ? participants - 1 : readers;
  }

  int connectionsPerTopic() {
    return participants > 0 ? participants : writers + readers;
  }
}
