package io.relay.bench;

import java.util.Map;
import java.util.Objects;

/**
 * One workload run: opens its connections ({@link BenchConnections}) on the generator's event
 * loops, runs the workload (the traffic of W1-W4, {@link TrafficRun}; the idle connections of W5,
 * {@link IdleRun}; the connect storm of W6, {@link AdmissionStorm}), returns the figures as a map
 * for the JSON result, and closes what it opened. Every wait is bounded.
 */
final class BenchRun {
  private final Workload w;
  private final Endpoints endpoints;
  private final ServerProbe probe;
  private final BenchCommand opts;
  private final EventLoop[] loops;
  private final BenchConnections connections;

  BenchRun(Workload w, Endpoints endpoints, ServerProbe probe, BenchCommand opts) {
    this.w = w;
    this.endpoints = endpoints;
    this.probe = probe;
    this.opts = opts;
    this.loops = new EventLoop[Math.max(1, opts.loops)];
    for (int i = 0; i < loops.length; i++) {
      loops[i] = new EventLoop("bench-loop-" + i, opts.tls());
    }
    this.connections = new BenchConnections(w, endpoints, loops);
  }

  Map<String, Object> execute() throws Exception {
    try {
      Map<String, Object> result =
          switch (w.shape()) {
            case TRAFFIC -> new TrafficRun(w, probe, opts, loops, connections).run();
            case IDLE -> new IdleRun(w, endpoints, probe, opts, loops, connections).run();
            case STORM ->
                new AdmissionStorm(opts.access, (Endpoints.Relay) endpoints, opts.stormId)
                    .run(w.topics() * w.connectionsPerTopic(), opts.concurrency, opts.admissionRate, probe);
          };
      connections.all.stream().map(c -> c.suite).filter(Objects::nonNull).findFirst().ifPresent(suite -> result.put("tlsSuite", suite));
      return result;
    } finally {
      closeAll(connections);
      for (EventLoop l : loops) {
        l.close();
      }
    }
  }

  /** Closes every connection of {@code connections}, each on its own loop. */
  static void closeAll(BenchConnections connections) {
    for (WsClient c : connections.all) {
      c.loop.call(() -> { c.close(); return null; });
    }
  }

  static void sleep(double seconds) {
    try {
      Thread.sleep((long) (seconds * 1000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static double ms(long nanos) {
    return round(nanos / 1e6, 3);
  }

  static double round(double v, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(v * f) / f;
  }
}
