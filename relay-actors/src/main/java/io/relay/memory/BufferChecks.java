package io.relay.memory;

import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetectorFactory;
import io.relay.ws.WsFrames;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Faults in the accounting of shared frames: a {@link WsFrames.Frame} let go of more often than
 * it was held, or written after its last holder let go. Either means a holder's count is wrong,
 * and the node's memory budget with it, so each is counted ({@code relay_buffer_faults_total})
 * and logged at ERROR with the stack of the code that made it (at most one a minute, unless the
 * checks are on). The bytes themselves are Netty's pooled buffers, each write holding its own
 * reference; a buffer that was never released (Netty's leak detector finds it once the garbage
 * collector has taken it) is a fault too, counted and logged the same way.
 *
 * <p>With the system property {@value #PROPERTY} set to {@code true} (every test run sets it) the
 * node also checks what costs time: Netty's leak detector tracks every buffer (paranoid), each
 * frame's bytes are checked against their CRC at every write, each frame remembers where its last
 * holder let go, so the fault names both holders; and every fault is kept ({@link #faults}) and,
 * except a leak (found on whatever thread allocates next), thrown at once as an {@link
 * IllegalStateException} in the thread that made it.
 */
public final class BufferChecks {
  /** The system property that turns the costly checks on. */
  public static final String PROPERTY = "relay.buffer-checks";
  /** Whether the costly checks are on (read once, at start). */
  public static final boolean ON = Boolean.getBoolean(PROPERTY);

  private static final Logger LOG = LoggerFactory.getLogger(BufferChecks.class);
  private static final LongAdder COUNT = new LongAdder();
  private static final List<IllegalStateException> FAULTS = new ArrayList<>();
  /** Without the checks on, at most one fault is logged a minute (the count goes on). */
  private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
  private static final AtomicLong LAST_LOGGED = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);

  static {
    if (ON) {
      ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }
    ResourceLeakDetectorFactory.setResourceLeakDetectorFactory(new LeaksAreFaults());
  }

  private BufferChecks() {}

  /**
   * Makes the checks watch Netty's buffers: called before the first buffer is made (the leak
   * detector of buffers is made with their class).
   */
  public static void watch() {
    // the class's initialisation does it
  }

  /** Leak detectors that report each leak as a fault, after Netty's own report of it. */
  private static final class LeaksAreFaults extends ResourceLeakDetectorFactory {
    @Override
    public <T> ResourceLeakDetector<T> newResourceLeakDetector(Class<T> resource, int samplingInterval, long maxActive) {
      return new ResourceLeakDetector<>(resource, samplingInterval) {
        @Override
        protected void reportTracedLeak(String type, String records) {
          super.reportTracedLeak(type, records);
          record(new IllegalStateException("a " + type + " was never released: " + records), false);
        }

        @Override
        protected void reportUntracedLeak(String type) {
          super.reportUntracedLeak(type);
          record(new IllegalStateException("a " + type + " was never released"), false);
        }
      };
    }
  }

  /**
   * Reports a fault found here, {@code earlier} being where the other party to it acted (the
   * previous release), if known: logged and counted; with the checks on, kept and thrown.
   */
  public static void fault(String what, Throwable earlier) {
    record(new IllegalStateException(what, earlier), true);
  }

  private static void record(IllegalStateException fault, boolean thrown) {
    COUNT.increment();
    long now = System.nanoTime();
    long last = LAST_LOGGED.get();
    if (ON || now - last >= LOG_EVERY_NANOS && LAST_LOGGED.compareAndSet(last, now)) {
      LOG.error("buffer accounting fault ({} so far): {}", COUNT.sum(), fault.getMessage(), fault);
    }
    if (ON) {
      synchronized (FAULTS) {
        FAULTS.add(fault);
      }
      if (thrown) {
        throw fault;
      }
    }
  }

  /** Faults found since the JVM started. */
  public static long count() {
    return COUNT.sum();
  }

  /** The faults found since the JVM started, or since {@link #clear}, while the checks were on. */
  public static List<IllegalStateException> faults() {
    synchronized (FAULTS) {
      return List.copyOf(FAULTS);
    }
  }

  /** Forgets the faults kept (a test that makes one on purpose). */
  public static void clear() {
    synchronized (FAULTS) {
      FAULTS.clear();
    }
  }
}
