package io.relay.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * One thread that runs many harness clients: a selector over their sockets, tasks handed in by
 * other threads, and timers (backoffs, deadlines, writers' pacing). Everything a client owns is
 * touched on this thread only, so thousands of participants cost one thread and no hand-over
 * per frame.
 */
final class ClientLoop implements AutoCloseable {
  /** What the selector calls when a client's socket is ready. */
  interface Ready {
    void onReady(SelectionKey key);
  }

  /**
   * A timer, once or (period above 0) at a fixed rate; cancelled ones stay queued and are skipped
   * when due. Cancelling is safe from any thread.
   */
  static final class Timer implements Comparable<Timer> {
    private long due;
    private long sequence;
    private final long periodNanos;
    private final Runnable task;
    private volatile boolean cancelled;

    private Timer(long due, long periodNanos, Runnable task) {
      this.due = due;
      this.periodNanos = periodNanos;
      this.task = task;
    }

    void cancel() {
      cancelled = true;
    }

    @Override
    public int compareTo(Timer o) {
      int byDue = Long.compare(due, o.due);
      return byDue != 0 ? byDue : Long.compare(sequence, o.sequence);
    }
  }

  private final Selector selector;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  private final PriorityQueue<Timer> timers = new PriorityQueue<>();
  private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
  private long timerSequence;
  private volatile boolean running = true;

  ClientLoop(String name) {
    try {
      selector = Selector.open();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  Selector selector() {
    return selector;
  }

  /** The loop's one read buffer, for a client to read into and parse before it returns. */
  ByteBuffer readBuffer() {
    return readBuffer;
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop's thread (at once when called there). */
  void execute(Runnable task) {
    if (inLoop()) {
      task.run();
      return;
    }
    tasks.add(task);
    selector.wakeup();
  }

  /** Runs {@code task} on the loop's thread after {@code delayMillis}; call on the loop's thread. */
  Timer schedule(long delayMillis, Runnable task) {
    return add(new Timer(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis), 0, task));
  }

  /** Runs {@code task} on the loop's thread now and then every {@code periodMillis}; call from any thread. */
  Timer every(long periodMillis, Runnable task) {
    Timer timer = new Timer(System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(periodMillis), task);
    execute(() -> add(timer));
    return timer;
  }

  private Timer add(Timer timer) {
    timer.sequence = timerSequence++;
    timers.add(timer);
    return timer;
  }

  private void run() {
    while (running) {
      try {
        selector.select(untilNextTimer());
        for (SelectionKey key : selector.selectedKeys()) {
          if (key.isValid()) {
            ((Ready) key.attachment()).onReady(key);
          }
        }
        selector.selectedKeys().clear();
        Runnable task;
        while ((task = tasks.poll()) != null) {
          task.run();
        }
        runDueTimers();
      } catch (IOException | RuntimeException e) {
        System.err.println("harness client loop: " + e);
      }
    }
    Runnable task;
    while ((task = tasks.poll()) != null) {
      task.run();
    }
    for (SelectionKey key : selector.keys()) {
      try {
        key.channel().close();
      } catch (IOException e) {
        System.err.println("harness client loop: closing a socket: " + e);
      }
    }
  }

  /** Milliseconds the selector may wait: until the next timer, at least 1 (0 would wait forever). */
  private long untilNextTimer() {
    Timer next = timers.peek();
    if (next == null) {
      return 1000;
    }
    return Math.max(1, TimeUnit.NANOSECONDS.toMillis(next.due - System.nanoTime()));
  }

  private void runDueTimers() {
    long now = System.nanoTime();
    Timer next;
    while ((next = timers.peek()) != null && next.due <= now) {
      timers.poll();
      if (next.cancelled) {
        continue;
      }
      next.task.run();
      if (next.periodNanos > 0) {
        next.due += next.periodNanos;
        add(next);
      }
    }
  }

  /** Stops the loop once it has run the tasks handed to it so far; closes every socket left. */
  @Override
  public void close() {
    running = false;
    selector.wakeup();
    try {
      thread.join(5000);
      selector.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
