package io.relay.http.socket;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One selector thread of a {@link SocketServer} port: it watches the sockets of the connections
 * it serves, runs the tasks other threads {@link #submit} to it, and then runs the streams it
 * woke ({@link SelectorRuns}); while it is busy it polls its sockets for a while before it waits
 * ({@link SelectorSpin}). A port has {@code relay.socket-selectors} of them, one per core by
 * default: each connection is served by one of them for its whole life.
 */
final class PortSelector {
  private static final Logger LOG = LoggerFactory.getLogger(PortSelector.class);

  private final Selector selector;
  private final Thread thread;
  private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final Consumer<SelectionKey> onSelected;
  /** {@link #onSelected}, noting when the first socket of a round was found ready. */
  private final Consumer<SelectionKey> onReady;
  private final SelectorSpin spin;
  /** Where the time spent polling before waits is counted, in nanoseconds. */
  private final LongAdder spun;
  /** When the first socket of this round was found ready; 0 before. */
  private long roundStart;
  /** How long the next select may wait, in milliseconds (0: until woken). */
  private final LongSupplier timeoutMillis;
  /** Runs on the selector thread once it has stopped and reset its connections. */
  private final Runnable onStop;
  private volatile boolean running = true;
  /** The thread left its loop: tasks submitted now are not run. */
  private volatile boolean stopped;

  /**
   * @param spinNanos how long the thread polls its sockets before it waits, while busy ({@link SelectorSpin})
   * @param spun where the time it polls is counted, in nanoseconds
   */
  PortSelector(
      String name,
      Consumer<SelectionKey> onSelected,
      LongSupplier timeoutMillis,
      long spinNanos,
      LongAdder spun,
      Runnable onStop)
      throws IOException {
    this.selector = Selector.open();
    this.onSelected = onSelected;
    this.onReady = key -> {
      if (roundStart == 0) {
        roundStart = System.nanoTime();
      }
      onSelected.accept(key);
    };
    this.spin = new SelectorSpin(spinNanos, System.nanoTime());
    this.spun = spun;
    this.timeoutMillis = timeoutMillis;
    this.onStop = onStop;
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
  }

  Selector selector() {
    return selector;
  }

  void start() {
    thread.start();
  }

  /** Stops the loop; the thread resets the connections it serves and closes its selector. */
  void stop() {
    running = false;
    selector.wakeup();
  }

  /**
   * Runs {@code task} on the selector thread, before it runs the streams it woke.
   *
   * @return false when the selector has stopped: the task will not run
   */
  boolean submit(Runnable task) {
    tasks.add(task);
    if (stopped && tasks.remove(task)) {
      return false;
    }
    selector.wakeup();
    return true;
  }

  /**
   * Wakes the selector thread, to take new interest in a socket or deregister a closed one; on
   * the selector thread itself there is nothing to wake, as the next select applies both.
   */
  void wakeup() {
    if (Thread.currentThread() != thread) {
      selector.wakeup();
    }
  }

  /** Reports the keys that are ready now, without waiting; on the selector thread only. */
  void selectNow() throws IOException {
    selector.selectNow(onSelected);
  }

  private void run() {
    SelectorRuns.adopt();
    try {
      while (running) {
        // nothing is left queued here: runQueued below runs or hands on all it finds
        roundStart = 0;
        long spinNanos = spin.nanos();
        int ready = 0;
        if (spinNanos > 0) {
          long from = System.nanoTime();
          long until = from + spinNanos;
          // a poll takes any wake-up pending, so the stop it may have been is looked for here
          while ((ready = selector.selectNow(onReady)) == 0
              && tasks.isEmpty()
              && running
              && System.nanoTime() - until < 0) {
            Thread.onSpinWait();
          }
          spun.add(System.nanoTime() - from);
        }
        if (ready == 0 && tasks.isEmpty() && running) {
          selector.select(onReady, timeoutMillis.getAsLong());
        }
        long woken = roundStart != 0 ? roundStart : System.nanoTime();
        runTasks();
        SelectorRuns.runQueued();
        spin.worked(woken, System.nanoTime());
      }
    } catch (IOException | RuntimeException e) {
      LOG.error("a socket selector failed; the port stops serving and its connections are closed", e);
    } finally {
      stopped = true;
      for (SelectionKey key : selector.keys()) {
        if (key.attachment() instanceof SocketEndpoint endpoint) {
          endpoint.reset();
        }
      }
      SelectorRuns.release();
      onStop.run();
      try {
        selector.close();
      } catch (IOException e) {
        LOG.warn("closing a socket selector failed", e);
      }
      // what was handed over before the stop: each task sees the closed selector and gives up
      for (Runnable task; (task = tasks.poll()) != null; ) {
        try {
          task.run();
        } catch (RuntimeException e) {
          LOG.debug("a task for a stopped selector failed: {}", e.toString());
        }
      }
    }
  }

  private void runTasks() {
    for (Runnable task; (task = tasks.poll()) != null; ) {
      task.run();
    }
  }
}
