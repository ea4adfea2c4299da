package io.relay.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * One thread that runs many non-blocking clients (the bench's generator connections, the
 * multi-node harness's participants): a selector over their sockets, tasks handed in by other
 * threads, timers, and a hook run after every round. Everything a client owns is touched on this
 * thread only, so thousands of connections cost one thread and no hand-over per frame.
 */
public final class SelectorLoop implements AutoCloseable {
  /** What the selector calls when a client's socket is ready; the key's attachment. */
  public interface Ready {
    void onReady(SelectionKey key);
  }

  /**
   * A timer, once or (period above 0) at a fixed rate; cancelled ones stay queued and are skipped
   * when due. Cancelling is safe from any thread.
   */
  public static final class Timer implements Comparable<Timer> {
    private final Runnable task;
    private final long periodNanos;
    private long due;
    /** Orders timers due at the same instant by when they were added. */
    private long sequence;
    private volatile boolean cancelled;

    private Timer(Runnable task, long periodNanos) {
      this.task = task;
      this.periodNanos = periodNanos;
    }

    public void cancel() {
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
  private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(256 * 1024);
  private final long maxWaitMillis;
  private final Runnable afterEachRound;
  private long timerSequence;
  private volatile boolean running = true;

  /**
   * Starts the loop's thread.
   *
   * @param maxWaitMillis the longest the selector waits when no timer is due sooner
   * @param afterEachRound run on the loop's thread after every round (ready sockets, tasks, timers)
   */
  public SelectorLoop(String name, long maxWaitMillis, Runnable afterEachRound) {
    this.maxWaitMillis = maxWaitMillis;
    this.afterEachRound = afterEachRound;
    try {
      selector = Selector.open();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  public Selector selector() {
    return selector;
  }

  /** The loop's one read buffer, for a client to read into and parse before it returns. */
  public ByteBuffer readBuffer() {
    return readBuffer;
  }

  public boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** Runs {@code task} on the loop's thread (at once when called there). */
  public void execute(Runnable task) {
    if (inLoop()) {
      task.run();
      return;
    }
    tasks.add(task);
    selector.wakeup();
  }

  /** Runs {@code task} on the loop's thread after {@code delayMillis}; call on the loop's thread. */
  public Timer schedule(long delayMillis, Runnable task) {
    return add(new Timer(task, 0), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis));
  }

  /** Runs {@code task} on the loop's thread now and then every {@code periodMillis}; call from any thread. */
  public Timer every(long periodMillis, Runnable task) {
    Timer timer = new Timer(task, TimeUnit.MILLISECONDS.toNanos(periodMillis));
    long now = System.nanoTime();
    execute(() -> add(timer, now));
    return timer;
  }

  private Timer add(Timer timer, long due) {
    timer.due = due;
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
        afterEachRound.run();
      } catch (IOException | RuntimeException e) {
        System.err.println(thread.getName() + ": " + e);
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
        System.err.println(thread.getName() + ": closing a socket: " + e);
      }
    }
  }

  /** Milliseconds the selector may wait: until the next timer, at least 1 (0 would wait forever). */
  private long untilNextTimer() {
    Timer next = timers.peek();
    if (next == null) {
      return maxWaitMillis;
    }
    return Math.max(1, Math.min(maxWaitMillis, TimeUnit.NANOSECONDS.toMillis(next.due - System.nanoTime())));
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
        add(next, next.due + next.periodNanos);
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
