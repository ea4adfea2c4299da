package io.relay.bench;

import static io.relay.bench.BenchRun.ms;
import static io.relay.bench.BenchRun.round;
import static io.relay.bench.BenchRun.sleep;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * W1-W4: the run's writers send at the workload's rate (W4: stepped up until a step fails, then
 * twice the highest passing rate) or, closed-loop, whenever their reader has drained (W3); each
 * window is measured at the readers, the server and the generator itself, and at the end what
 * every reader lost and got out of order.
 */
final class TrafficRun {
  /** The share of a step's rate its writers must offer for the step to pass. */
  static final double OFFERED_AT_RATE = 0.95;
  private static final long DRAIN_MILLIS = 3000;

  private final Workload w;
  private final ServerProbe probe;
  private final BenchCommand opts;
  private final EventLoop[] loops;
  private final BenchConnections connections;
  private final List<WsClient> readers;
  private final List<EventLoop.Writer> writers;
  private final List<WsClient> all;

  TrafficRun(Workload w, ServerProbe probe, BenchCommand opts, EventLoop[] loops, BenchConnections connections) {
    this.w = w;
    this.probe = probe;
    this.opts = opts;
    this.loops = loops;
    this.connections = connections;
    this.readers = connections.readers;
    this.writers = connections.writers;
    this.all = connections.all;
  }

  Map<String, Object> run() throws Exception {
    Map<String, Object> r = new LinkedHashMap<>();
    long t0 = System.nanoTime();
    connections.openTopics(w.topics(), 0);
    double connectSeconds = (System.nanoTime() - t0) / 1e9;
    connections.putConnect(r, connectSeconds);
    if (w.steps().isEmpty()) {
      double perWriter = w.participants() > 0 ? w.rate() / w.participants() : w.rate();
      startSending(perWriter);
      sleep(opts.warmup);
      Map<String, Object> window = measure(opts.duration, w.rate());
      r.putAll(window);
    } else {
      List<Map<String, Object>> steps = new ArrayList<>();
      double best = 0;
      double bestMBps = 0;
      boolean started = false;
      for (double rate : w.steps()) {
        if (!started) {
          // the whole warm-up at the first step's rate, as W1-W3 have theirs: a node's first
          // minute of traffic has its JIT recompile paths that meet their first control frames
          // (the first ping round, 20 s after the connections open: docs/benchmark-notes.md,
          // "Warm-up"), which would land in whichever step runs then
          startSending(rate);
          started = true;
          sleep(opts.warmup);
        } else {
          setRate(rate);
          sleep(Math.min(opts.warmup, 1.0));
        }
        ServerProbe.Counters before = probe.counters();
        Map<String, Object> step = measure(opts.stepSeconds, rate);
        putServerCounters(step, before, probe.counters());
        step.put("rate", rate);
        steps.add(step);
        System.err.printf("bench: %s %.0f/s per topic: %s%n", w.name(), rate, brief(step));
        if (Boolean.TRUE.equals(step.get("pass"))) {
          best = rate;
          bestMBps = Math.max(bestMBps, (double) step.get("deliveredMBps"));
        } else {
          break;
        }
      }
      r.put("steps", steps);
      r.put("highestPassingRate", best);
      r.put("highestPassingMBps", bestMBps);
      if (opts.overload && best > 0) {
        setRate(2 * best);
        sleep(1.0);
        ServerProbe.Counters before = probe.counters();
        Map<String, Object> over = measure(opts.stepSeconds, 2 * best);
        putServerCounters(over, before, probe.counters());
        over.put("rate", 2 * best);
        over.put("openConnections", all.stream().filter(WsClient::isOpen).count());
        over.put("connections", all.size());
        r.put("overload", over);
        System.err.printf("bench: %s overload %.0f/s per topic: %s%n", w.name(), 2 * best, brief(over));
      }
    }
    stopSending();
    drain();
    putLoss(r);
    r.put("closedConnections", all.stream().filter(WsClient::isClosed).count());
    return r;
  }

  /**
   * What the relay counted in a W4 window: frames dropped from full reader queues, the time in
   * garbage collection, and how often its event loops ran more than 50 ms late; -1 each for a
   * server without metrics.
   */
  private static void putServerCounters(Map<String, Object> window, ServerProbe.Counters before, ServerProbe.Counters after) {
    double dropped = after.droppedFrames() - before.droppedFrames();
    double gc = after.gcSeconds() - before.gcSeconds();
    window.put("serverDroppedFrames", Double.isNaN(dropped) ? -1 : (long) dropped);
    window.put("serverGcSeconds", Double.isNaN(gc) ? -1 : round(gc, 3));
    double late = after.loopDelaysOver50ms() - before.loopDelaysOver50ms();
    window.put("serverLoopDelaysOver50ms", Double.isNaN(late) ? -1 : (long) late);
  }

  private Map<String, Object> measure(double seconds, double ratePerTopic) {
    swapAll();
    double cpu0 = probe.cpuSeconds();
    double self0 = ServerProbe.selfCpuSeconds();
    long t0 = System.nanoTime();
    sleep(seconds);
    EventLoop.Stats s = swapAll();
    double elapsed = (System.nanoTime() - t0) / 1e9;
    double cpu = probe.cpuSeconds() - cpu0;
    double self = ServerProbe.selfCpuSeconds() - self0;
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("seconds", round(elapsed, 2));
    m.put("intendedMsgPerS", round(ratePerTopic * w.topics(), 1));
    m.put("offeredMsgPerS", round(s.offered / elapsed, 1));
    m.put("skippedByGenerator", s.skipped);
    m.put("generatorSendLateMaxMs", w.rate() > 0 ? round(s.sendLateMaxNanos / 1e6, 1) : -1); // W3's closed loop has no rate to be late for
    m.put("deliveredMsgPerS", round(s.delivered / elapsed, 1));
    m.put("deliveredMBps", round(s.deliveredBytes / elapsed / 1e6, 2));
    double expected = (double) s.offered * w.fanOut();
    double delivery = expected == 0 ? 0 : s.delivered / expected;
    m.put("deliveryRatio", round(delivery, 4));
    m.put("p50Ms", ms(s.latency.quantile(0.50)));
    m.put("p90Ms", ms(s.latency.quantile(0.90)));
    m.put("p99Ms", ms(s.latency.quantile(0.99)));
    m.put("p999Ms", ms(s.latency.quantile(0.999)));
    m.put("maxMs", ms(s.latency.max()));
    m.put("lostInWindow", s.lost);
    m.put("reorderedInWindow", s.reordered);
    m.put("serverCpuPct", round(100 * cpu / elapsed, 1));
    m.put("generatorCpuPct", round(100 * self / elapsed, 1));
    m.put("serverRssMB", round(probe.rssBytes() / 1e6, 1));
    long heap = probe.heapUsedBytes(false);
    m.put("serverHeapMB", heap < 0 ? -1 : round(heap / 1e6, 1));
    double intended = w.rate() > 0 ? ratePerTopic * w.topics() * elapsed : 0;
    m.put("pass", passes(s.latency.quantile(0.99) / 1e6, delivery, s.offered, intended, opts.p99LimitMs, opts.minDelivery));
    return m;
  }

  /**
   * Whether a W4 step passed at its rate: its p99 within the limit, its delivery (of what was
   * offered) at least the minimum, and at least {@link #OFFERED_AT_RATE} of the rate offered. A
   * server that closes writers, or holds them back until the generator skips their messages, is
   * offered less, and what the rest deliver does not pass for the rate.
   */
  static boolean passes(double p99Ms, double delivery, double offered, double intended, double p99LimitMs, double minDelivery) {
    return p99Ms <= p99LimitMs && delivery >= minDelivery && offered >= OFFERED_AT_RATE * intended;
  }

  private static String brief(Map<String, Object> m) {
    return String.format(
        "offered %s msg/s, delivered %s MB/s (%s), p99 %s ms, server cpu %s%%, generator cpu %s%%",
        m.get("offeredMsgPerS"), m.get("deliveredMBps"), m.get("deliveryRatio"), m.get("p99Ms"),
        m.get("serverCpuPct"), m.get("generatorCpuPct"));
  }

  private void putLoss(Map<String, Object> r) {
    long lost = 0;
    long reordered = 0;
    long maxLostPerReader = 0;
    long maxReorderedPerReader = 0;
    for (WsClient reader : readers) {
      long tail = 0;
      EventLoop.Writer source = writerById(reader.expectWriter);
      if (source != null) {
        tail = Math.max(0, source.client.seq - 1 - reader.arrivals.maxSeq);
      }
      long l = reader.arrivals.lost + tail;
      lost += l;
      reordered += reader.arrivals.reordered;
      maxLostPerReader = Math.max(maxLostPerReader, l);
      maxReorderedPerReader = Math.max(maxReorderedPerReader, reader.arrivals.reordered);
    }
    r.put("readers", readers.size());
    r.put("lostTotal", lost);
    r.put("lostMaxPerReader", maxLostPerReader);
    r.put("reorderedTotal", reordered);
    r.put("reorderedMaxPerReader", maxReorderedPerReader);
  }

  private EventLoop.Writer writerById(int id) {
    for (EventLoop.Writer wr : writers) {
      if (wr.writerId == id) {
        return wr;
      }
    }
    return null;
  }

  private void startSending(double ratePerWriter) {
    long now = System.nanoTime();
    for (EventLoop.Writer wr : writers) {
      EventLoop loop = wr.client.loop;
      if (w.rate() == 0) {
        wr.creditFrom = readers.stream().filter(r -> r.expectWriter == wr.writerId).findFirst().orElseThrow();
        wr.creditFrom.arrivals.creditTo = wr;
        wr.window = opts.window;
      }
      long period = ratePerWriter > 0 ? (long) (1e9 / ratePerWriter) : 0;
      wr.phaseNanos = period == 0 ? 0 : ThreadLocalRandom.current().nextLong(period);
      loop.call(() -> { loop.addWriter(wr); return null; }).join();
    }
    for (EventLoop l : loops) {
      l.call(() -> { l.setRate(ratePerWriter, now); l.setSending(true); return null; }).join();
    }
  }

  private void setRate(double ratePerWriter) {
    long now = System.nanoTime();
    for (EventLoop l : loops) {
      l.call(() -> { l.setRate(ratePerWriter, now); return null; }).join();
    }
  }

  private void stopSending() {
    for (EventLoop l : loops) {
      l.call(() -> { l.setSending(false); return null; }).join();
    }
  }

  /** Waits until the readers stop receiving (at most {@link #DRAIN_MILLIS}). */
  private void drain() {
    long deadline = System.currentTimeMillis() + DRAIN_MILLIS;
    long last = -1;
    while (System.currentTimeMillis() < deadline) {
      long now = readers.stream().mapToLong(c -> c.arrivals.received).sum();
      if (now == last) {
        break;
      }
      last = now;
      sleep(0.2);
    }
  }

  private EventLoop.Stats swapAll() {
    EventLoop.Stats total = new EventLoop.Stats();
    for (EventLoop l : loops) {
      total.add(l.call(l::swapStats).join());
    }
    return total;
  }
}
