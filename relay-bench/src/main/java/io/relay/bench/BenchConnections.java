package io.relay.bench;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The connections of one workload run: opens each topic's readers before its writers (at most
 * {@value #CONNECT_CONCURRENCY} connection attempts at a time, each bounded), places them on the
 * event loops, and records how long each took to open.
 */
final class BenchConnections {
  private static final int CONNECT_CONCURRENCY = 64;
  private static final long CONNECT_TIMEOUT_SECONDS = 60;

  final List<WsClient> readers = new ArrayList<>();
  final List<EventLoop.Writer> writers = new ArrayList<>();
  final List<WsClient> all = new ArrayList<>();
  private final List<Long> connectNanos = new ArrayList<>();
  private final Workload w;
  private final Endpoints endpoints;
  private final EventLoop[] loops;
  private final String runId = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
  private int nextId;

  BenchConnections(Workload w, Endpoints endpoints, EventLoop[] loops) {
    this.w = w;
    this.endpoints = endpoints;
    this.loops = loops;
  }

  /** Opens topics [from, from+count): all readers first, then the writers. */
  void openTopics(int count, int first) throws Exception {
    List<CompletableFuture<WsClient>> pending = new ArrayList<>();
    Semaphore slots = new Semaphore(CONNECT_CONCURRENCY);
    List<Runnable> writersToOpen = new ArrayList<>();
    for (int t = first; t < first + count; t++) {
      String topic = "bench-" + runId + "-" + t;
      if (w.participants() > 0) {
        for (int p = 0; p < w.participants(); p++) {
          int writerId = t * 16 + p;
          int peer = t * 16 + (1 - p);
          WsClient c = connect(topic, Endpoints.Role.PARTICIPANT, p, peer, slots, pending);
          readers.add(c);
          addWriter(c, writerId);
        }
        continue;
      }
      int writerId = t * 16;
      for (int i = 0; i < w.readers(); i++) {
        readers.add(connect(topic, Endpoints.Role.READER, i, writerId, slots, pending));
      }
      String tp = topic;
      writersToOpen.add(() -> {
        try {
          WsClient c = connect(tp, Endpoints.Role.WRITER, 0, -1, slots, pending);
          addWriter(c, writerId);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
    }
    awaitAll(pending);
    pending.clear();
    for (Runnable r : writersToOpen) {
      r.run();
    }
    awaitAll(pending);
  }

  private WsClient connect(
      String topic, Endpoints.Role role, int index, int expectWriter, Semaphore slots, List<CompletableFuture<WsClient>> pending)
      throws InterruptedException {
    if (!slots.tryAcquire(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      throw new IllegalStateException("connections did not open within " + CONNECT_TIMEOUT_SECONDS + " s");
    }
    EventLoop loop = loops[placement(role)];
    WsClient c = new WsClient(nextId(), loop, expectWriter);
    c.connectStartNanos = System.nanoTime();
    CompletableFuture<WsClient> opened =
        endpoints.uri(topic, role, index)
            .thenCompose(
                uri -> {
                  c.uri = uri;
                  loop.call(() -> { c.start(); return null; });
                  return c.opened;
                })
            .whenComplete((ignored, e) -> slots.release());
    pending.add(opened);
    return c;
  }

  private int placement(Endpoints.Role role) {
    if (w.rate() == 0 && w.shape() != Workload.Shape.IDLE && loops.length > 1) {
      return role == Endpoints.Role.WRITER ? 0 : 1; // W3: writer and reader on their own threads
    }
    return nextId % loops.length;
  }

  private synchronized int nextId() {
    return nextId++;
  }

  private void awaitAll(List<CompletableFuture<WsClient>> pending) throws Exception {
    for (CompletableFuture<WsClient> f : pending) {
      WsClient c;
      try {
        c = f.get(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new IllegalStateException("a connection did not open: " + rootMessage(e), e);
      }
      synchronized (all) {
        all.add(c);
        connectNanos.add(c.connectNanos);
      }
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t.getMessage();
  }

  private void addWriter(WsClient c, int writerId) {
    EventLoop.Writer wr = new EventLoop.Writer(c, writerId, Math.max(w.size(), WsClient.HEAD), filler());
    writers.add(wr);
  }

  private ByteBuffer fillerBuffer;

  private ByteBuffer filler() {
    if (fillerBuffer == null) {
      fillerBuffer = BenchCommand.filler(Math.max(w.size(), WsClient.HEAD));
    }
    return fillerBuffer;
  }

  void putConnect(Map<String, Object> r, double seconds) {
    long[] sorted = connectNanos.stream().mapToLong(Long::longValue).sorted().toArray();
    r.put("connections", sorted.length);
    r.put("connectSeconds", BenchRun.round(seconds, 2));
    r.put("connectsPerS", BenchRun.round(sorted.length / Math.max(seconds, 1e-9), 1));
    r.put("connectP50Ms", sorted.length == 0 ? 0 : BenchRun.ms(sorted[sorted.length / 2]));
    r.put("connectP99Ms", sorted.length == 0 ? 0 : BenchRun.ms(sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)]));
    r.put("connectMaxMs", sorted.length == 0 ? 0 : BenchRun.ms(sorted[sorted.length - 1]));
  }
}
