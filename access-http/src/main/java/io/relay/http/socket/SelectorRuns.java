package io.relay.http.socket;

import com.typesafe.config.Config;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.dispatch.DispatcherPrerequisites;
import org.apache.pekko.dispatch.ExecutorServiceConfigurator;
import org.apache.pekko.dispatch.ExecutorServiceFactory;
import org.apache.pekko.dispatch.ForkJoinExecutorConfigurator;
import org.apache.pekko.dispatch.Mailbox;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor of the client connections' dispatcher ({@link ClientStreams}): a fork-join pool, as
 * Pekko's {@code fork-join-executor} configures it, except for the work a {@link SocketServer}'s
 * selector thread hands it. An actor's mailbox scheduled from a selector thread (a stream woken
 * with the bytes the selector read for it, or told its socket is writable) runs on that selector
 * thread, once the selector has gone through the sockets it found ready, instead of waking a thread
 * of the pool: a frame read from a writer is relayed by the thread that read it, with no hand-over
 * to another thread. The selector does so for at most {@link #RUN_NANOS} a round and hands the
 * rest to the pool, so that its sockets are polled again soon; a port has a selector per core
 * ({@link PortSelector}), so a busy port's work is spread over the cores by its selectors. Work scheduled from any other thread, and any task
 * that is not an actor's mailbox (a TLS handshake's signing, a future's callback), goes to the
 * pool.
 *
 * <p>Configured as the dispatcher's {@code executor} (access-http's reference.conf), with its
 * {@code fork-join-executor} section for the pool.
 */
public final class SelectorRuns extends ExecutorServiceConfigurator {
  private static final Logger LOG = LoggerFactory.getLogger(SelectorRuns.class);
  /**
   * How long a selector thread runs the work it scheduled before handing the rest to the pool:
   * long enough for a run of large frames (a 64 KiB frame over TLS costs its selector about 70 µs
   * to decrypt, relay, encrypt and write), so that a stream that keeps its socket full is not cut
   * into pieces that two threads take turns at; short enough that a busy selector polls its
   * sockets again within a few milliseconds.
   */
  static final long RUN_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

  /** A selector thread's work: set on selector threads only. */
  private static final ThreadLocal<Queue> QUEUE = new ThreadLocal<>();

  private final ForkJoinExecutorConfigurator pool;

  public SelectorRuns(Config config, DispatcherPrerequisites prerequisites) {
    super(config, prerequisites);
    this.pool = new ForkJoinExecutorConfigurator(config.getConfig("fork-join-executor"), prerequisites);
  }

  @Override
  public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
    ExecutorServiceFactory factory = pool.createExecutorServiceFactory(id, threadFactory);
    return () -> new Executor(factory.createExecutorService());
  }

  /** Makes the calling thread, a selector thread, run the mailboxes it schedules ({@link #runQueued}). */
  static void adopt() {
    QUEUE.set(new Queue());
  }

  /**
   * On a selector thread: runs the mailboxes it scheduled since the last call, and those they
   * schedule in turn, for at most {@link #RUN_NANOS}; hands the rest to their pool.
   */
  static void runQueued() {
    Queue queue = QUEUE.get();
    if (queue.tasks.isEmpty()) {
      return;
    }
    long deadline = System.nanoTime() + RUN_NANOS;
    Runnable task;
    while ((task = queue.tasks.poll()) != null) {
      if (System.nanoTime() - deadline < 0) {
        runGuarded(task);
      } else {
        queue.pool.execute(task);
      }
    }
  }

  /** How many mailboxes the calling selector thread has scheduled and not run or handed on yet. */
  static int queued() {
    Queue queue = QUEUE.get();
    return queue == null ? 0 : queue.tasks.size();
  }

  /** Runs a mailbox; a failure that escapes it must not stop the selector, which serves a port. */
  private static void runGuarded(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      LOG.error("a connection's work failed on the selector thread", e);
    }
  }

  /** On a selector thread that stops: hands what it scheduled and has not run to the pool. */
  static void release() {
    Queue queue = QUEUE.get();
    QUEUE.remove();
    for (Runnable task; queue != null && (task = queue.tasks.poll()) != null; ) {
      queue.pool.execute(task);
    }
  }

  /** The work a selector thread scheduled on one pool and has not run yet. */
  private static final class Queue {
    final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    ExecutorService pool;
  }

  /** The dispatcher's executor: the pool, or the scheduling selector thread for its mailboxes. */
  private static final class Executor extends AbstractExecutorService {
    private final ExecutorService pool;

    Executor(ExecutorService pool) {
      this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
      Queue queue = task instanceof Mailbox ? QUEUE.get() : null;
      if (queue != null && (queue.pool == pool || queue.tasks.isEmpty())) {
        queue.pool = pool;
        queue.tasks.add(task);
      } else {
        pool.execute(task);
      }
    }

    @Override
    public void shutdown() {
      pool.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
      return pool.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
      return pool.isShutdown();
    }

    @Override
    public boolean isTerminated() {
      return pool.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
      return pool.awaitTermination(timeout, unit);
    }
  }
}
