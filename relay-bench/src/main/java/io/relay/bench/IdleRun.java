package io.relay.bench;

import static io.relay.bench.BenchRun.round;
import static io.relay.bench.BenchRun.sleep;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * W5: what idle connections cost the server. After a warm-up that opens and closes a fifth as many
 * connections, the run's connections are opened a fifth at a time, each fifth a point of the
 * memory series; heap and RSS are read once the node holds none of their access codes.
 */
final class IdleRun {
  /** Long enough for a node's access codes to expire (relay.code-ttl, 30 s) and be swept (every 10 s). */
  private static final double CODES_GONE_SECONDS = 90;

  private final Workload w;
  private final Endpoints endpoints;
  private final ServerProbe probe;
  private final BenchCommand opts;
  private final EventLoop[] loops;
  private final BenchConnections connections;
  private final List<WsClient> all;

  IdleRun(Workload w, Endpoints endpoints, ServerProbe probe, BenchCommand opts, EventLoop[] loops, BenchConnections connections) {
    this.w = w;
    this.endpoints = endpoints;
    this.probe = probe;
    this.opts = opts;
    this.loops = loops;
    this.connections = connections;
    this.all = connections.all;
  }

  Map<String, Object> run() throws Exception {
    Map<String, Object> r = new LinkedHashMap<>();
    int checkpoints = 5;
    int perCheckpoint = Math.max(1, w.topics() / checkpoints);
    r.put("warmupConnections", warmUp(perCheckpoint));
    long heap0 = probe.heapUsedBytes(true);
    ServerProbe.MemorySplit split0 = probe.memorySplit();
    long rss0 = split0 != null ? split0.rss() : probe.rssBytes();
    List<Map<String, Object>> series = new ArrayList<>();
    series.add(point(0, heap0, rss0));
    long t0 = System.nanoTime();
    int opened = 0;
    while (opened < w.topics()) {
      int n = Math.min(perCheckpoint, w.topics() - opened);
      connections.openTopics(n, opened);
      opened += n;
      series.add(point(all.size(), -2, probe.rssBytes()));
    }
    double connectSeconds = (System.nanoTime() - t0) / 1e9;
    connections.putConnect(r, connectSeconds);
    sleep(Math.max(2, opts.warmup));
    probe.awaitZero("relay_codes_replicated", "the connections' access codes expired and swept", CODES_GONE_SECONDS);
    long heap1 = probe.heapUsedBytes(true);
    ServerProbe.MemorySplit split1 = probe.memorySplit();
    long rss1 = split1 != null ? split1.rss() : probe.rssBytes();
    series.add(point(all.size(), heap1, rss1));
    long open = all.stream().filter(WsClient::isOpen).count();
    r.put("openConnections", open);
    r.put("serverHeapBaselineMB", round(heap0 / 1e6, 1));
    r.put("serverHeapMB", round(heap1 / 1e6, 1));
    r.put("serverRssBaselineMB", round(rss0 / 1e6, 1));
    r.put("serverRssMB", round(rss1 / 1e6, 1));
    r.put("heapPerConnectionKB", heap0 < 0 ? -1 : round((heap1 - heap0) / 1024.0 / all.size(), 2));
    r.put("rssPerConnectionKB", round((rss1 - rss0) / 1024.0 / all.size(), 2));
    if (split0 != null && split1 != null) {
      ServerProbe.MemorySplit grown = split1.minus(split0);
      r.put("heapPagesPerConnectionKB", round(grown.heapPages() / 1024.0 / all.size(), 2));
      r.put("compiledPerConnectionKB", round(grown.compiledAndClasses() / 1024.0 / all.size(), 2));
      r.put("otherNativePerConnectionKB", round(grown.otherNative() / 1024.0 / all.size(), 2));
    }
    r.put("memorySeries", series);
    r.put("closedConnections", all.size() - open);
    return r;
  }

  /**
   * Opens and closes {@code topics} topics' connections beyond the measured ones, so that W5
   * measures a node that has served connections before (its connect path compiled, its pools
   * filled), not one that has just started; then waits until the node holds none of them, nor
   * their access codes (gone {@code relay.code-ttl} after issue, at the next sweep).
   *
   * @return the connections opened and closed
   */
  private int warmUp(int topics) throws Exception {
    BenchConnections warm = new BenchConnections(w, endpoints, loops);
    warm.openTopics(topics, w.topics());
    BenchRun.closeAll(warm);
    probe.awaitZero("relay_connections", "the warm-up's connections closed by the node", 60);
    probe.awaitZero("relay_codes_replicated", "the warm-up's access codes expired and swept", CODES_GONE_SECONDS);
    probe.awaitQuiet(AdmissionStorm.QUIET_CORES, 30);
    return warm.all.size();
  }

  private static Map<String, Object> point(int connections, long heap, long rss) {
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("connections", connections);
    p.put("heapMB", heap < 0 ? null : round(heap / 1e6, 1));
    p.put("rssMB", round(rss / 1e6, 1));
    return p;
  }
}
