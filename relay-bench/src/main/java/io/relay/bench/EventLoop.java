package io.relay.bench;

import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * One generator thread ({@link SelectorLoop}): its connections, a tick at least every 1 ms that
 * paces its writers, and the statistics of what its readers received. Everything it owns is
 * touched on its thread only; other threads talk to it through {@link #call}.
 */
final class EventLoop implements AutoCloseable {
  private static final long TICK_MILLIS = 1;
  /** A writer whose socket has this much unsent is not given more; the frame counts as skipped. */
  static final long MAX_PENDING_BYTES = 8L << 20;

  /** What a loop's readers received and its writers sent within one measurement window. */
  static final class Stats {
    final LatencyHistogram latency = new LatencyHistogram();
    long delivered;
    long deliveredBytes;
    long lost;
    long reordered;
    long offered;
    long offeredBytes;
    long skipped;
    long closedByServer;
    /** The most a message went out later than its writer's rate asked: the generator's loop behind. */
    long sendLateMaxNanos;

    void delivered(long latencyNanos, long bytes) {
      delivered++;
      deliveredBytes += bytes;
      latency.record(latencyNanos);
    }

    void add(Stats o) {
      latency.add(o.latency);
      delivered += o.delivered;
      deliveredBytes += o.deliveredBytes;
      lost += o.lost;
      reordered += o.reordered;
      offered += o.offered;
      offeredBytes += o.offeredBytes;
      skipped += o.skipped;
      closedByServer += o.closedByServer;
      sendLateMaxNanos = Math.max(sendLateMaxNanos, o.sendLateMaxNanos);
    }
  }

  /** A connection that sends at a fixed rate, or (rate 0) whenever its reader has drained. */
  static final class Writer {
    final WsClient client;
    final int writerId;
    final int size;
    final ByteBuffer filler;
    double ratePerSecond;
    long phaseNanos;
    long stepStartNanos;
    long due;
    /** Closed-loop mode: the reader whose progress gives credit, and the window in messages. */
    WsClient creditFrom;
    int window;
    /**
     * Closed-loop mode: the window is full and the writer's loop waits for its reader, which wakes
     * the loop when the next message arrives ({@link Arrivals}). Without this the writer
     * would go on only at its loop's next tick, or when its server happens to send it something.
     */
    volatile boolean awaitingCredit;

    Writer(WsClient client, int writerId, int size, ByteBuffer filler) {
      this.client = client;
      this.writerId = writerId;
      this.size = size;
      this.filler = filler;
    }
  }

  /** The TLS client of the run's wss connections, or null. */
  private final Tls tls;
  private final List<Writer> writers = new ArrayList<>();
  private Stats stats = new Stats();
  private volatile boolean sending;
  private final SelectorLoop loop;

  /** @param tls for wss connections; null when the run has none */
  EventLoop(String name, Tls tls) {
    this.tls = tls;
    this.loop = new SelectorLoop(name, TICK_MILLIS, this::afterEachRound);
  }

  Selector selector() {
    return loop.selector();
  }

  Tls tls() {
    return tls;
  }

  ByteBuffer readBuffer() {
    return loop.readBuffer();
  }

  Stats stats() {
    return stats;
  }

  /** Runs {@code task} on this loop's thread and returns its result. */
  <T> CompletableFuture<T> call(Supplier<T> task) {
    CompletableFuture<T> result = new CompletableFuture<>();
    loop.execute(
        () -> {
          try {
            result.complete(task.get());
          } catch (RuntimeException e) {
            result.completeExceptionally(e);
          }
        });
    return result;
  }

  void addWriter(Writer writer) {
    writers.add(writer);
  }

  /** Sets every writer's rate (frames/s) from now on, each with its own phase. */
  void setRate(double ratePerSecond, long now) {
    for (Writer w : writers) {
      w.ratePerSecond = ratePerSecond;
      w.stepStartNanos = now;
      w.due = 0;
    }
  }

  void setSending(boolean on) {
    sending = on;
  }

  /** Swaps in fresh statistics and returns the finished window's. */
  Stats swapStats() {
    Stats done = stats;
    stats = new Stats();
    return done;
  }

  private void afterEachRound() {
    if (sending) {
      tick(System.nanoTime());
    }
  }

  private void tick(long now) {
    for (Writer w : writers) {
      WsClient c = w.client;
      if (!c.isOpen()) {
        continue;
      }
      if (w.creditFrom != null) {
        sendWithinWindow(w);
        continue;
      }
      long elapsed = now - w.stepStartNanos - w.phaseNanos;
      if (elapsed < 0 || w.ratePerSecond <= 0) {
        continue;
      }
      long target = (long) (elapsed * w.ratePerSecond / 1e9) + 1;
      while (w.due < target) {
        long late = elapsed - (long) (w.due * 1e9 / w.ratePerSecond);
        w.due++;
        if (c.pendingBytes() >= MAX_PENDING_BYTES) {
          stats.skipped++;
        } else {
          stats.sendLateMaxNanos = Math.max(stats.sendLateMaxNanos, late);
          send(w, now);
        }
      }
    }
  }

  /**
   * Sends while the window has room; then, unless the socket is what holds the writer back (its
   * readiness wakes the loop), asks the reader to wake the loop when the next message arrives.
   */
  private void sendWithinWindow(Writer w) {
    WsClient c = w.client;
    while (true) {
      while (c.seq - w.creditFrom.arrivals.received < w.window && c.pendingBytes() < MAX_PENDING_BYTES) {
        send(w, System.nanoTime());
      }
      if (c.pendingBytes() >= MAX_PENDING_BYTES) {
        return;
      }
      w.awaitingCredit = true;
      if (c.seq - w.creditFrom.arrivals.received >= w.window) {
        return;
      }
      w.awaitingCredit = false; // a message arrived between the check and the flag
    }
  }

  /** Wakes the loop from another thread, so that it runs a round now. */
  void wakeup() {
    loop.selector().wakeup();
  }

  private void send(Writer w, long now) {
    w.client.sendMessage(w.writerId, w.size, w.filler, now);
    stats.offered++;
    stats.offeredBytes += w.size;
  }

  @Override
  public void close() {
    loop.close();
  }
}
