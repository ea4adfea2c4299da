package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A selector thread polls before it waits only after it has been busy, and counts the time it polls. */
class PortSelectorTest {
  private static final long SPIN = TimeUnit.MICROSECONDS.toNanos(50);

  private final LongAdder spun = new LongAdder();
  private PortSelector selector;

  private final CountDownLatch stopped = new CountDownLatch(1);

  private PortSelector start(long spinNanos) throws IOException {
    selector = new PortSelector("test-selector", key -> {}, () -> 0, spinNanos, spun, stopped::countDown);
    selector.start();
    return selector;
  }

  @AfterEach
  void stop() {
    if (selector != null) {
      selector.stop();
    }
  }

  /** Submits a task that keeps the selector thread working for {@code nanos}, counted down when done. */
  private static void work(PortSelector selector, long nanos, CountDownLatch done) {
    selector.submit(
        () -> {
          long until = System.nanoTime() + nanos;
          while (System.nanoTime() - until < 0) {
            Thread.onSpinWait();
          }
          done.countDown();
        });
  }

  /** Keeps the selector thread working for 40 ms in 1 ms tasks, and returns once it has. */
  private static void busyFor40Ms(PortSelector selector) throws InterruptedException {
    CountDownLatch done = new CountDownLatch(40);
    for (int i = 0; i < 40; i++) {
      work(selector, TimeUnit.MILLISECONDS.toNanos(1), done);
    }
    assertTrue(done.await(10, TimeUnit.SECONDS), "the selector thread did not run the 40 tasks");
  }

  @Test
  void aSelectorThatWasBusyPollsBeforeItWaitsAndCountsIt() throws Exception {
    busyFor40Ms(start(SPIN));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (spun.sum() == 0 && System.nanoTime() - deadline < 0) {
      Thread.onSpinWait();
    }
    assertTrue(spun.sum() > 0, "after 40 ms of work the selector did not poll before waiting");
  }

  @Test
  void aSelectorStoppedWhilePollingStops() throws Exception {
    // the longest poll allowed, so that the stop lands while the thread polls: a poll takes the
    // stop's wake-up, and a thread that then blocked in select would never see the stop
    PortSelector selector = start(TimeUnit.MILLISECONDS.toNanos(1));
    busyFor40Ms(selector);
    selector.stop();
    assertTrue(stopped.await(10, TimeUnit.SECONDS), "the selector thread did not stop after polling");
  }

  @Test
  void aSelectorMostlyIdleWaitsAtOnce() throws Exception {
    PortSelector selector = start(SPIN);
    CountDownLatch done = new CountDownLatch(20);
    for (int i = 0; i < 20; i++) {
      work(selector, TimeUnit.MICROSECONDS.toNanos(10), done);
      // the load itself: a short task every 2 ms keeps the thread busy for well under half its time
      TimeUnit.MILLISECONDS.sleep(2);
    }
    assertTrue(done.await(10, TimeUnit.SECONDS), "the selector thread did not run the 20 tasks");
    assertEquals(0, spun.sum(), "a selector busy for under 1 % of its time polled before waiting");
  }

  @Test
  void aSelectorWithSpinOffNeverPolls() throws Exception {
    PortSelector selector = start(0);
    busyFor40Ms(selector);
    CountDownLatch after = new CountDownLatch(1);
    work(selector, 0, after);
    assertTrue(after.await(10, TimeUnit.SECONDS), "the selector thread did not run a task after its busy stretch");
    assertEquals(0, spun.sum(), "with the spin off the selector polled");
  }
}
