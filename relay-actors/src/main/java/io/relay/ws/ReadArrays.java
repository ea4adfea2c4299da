package io.relay.ws;

import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The arrays that large socket reads are copied into, given back for later reads once the
 * message relayed from one has been written to every reader ({@link WsFrames.Frame#inReadArray}).
 * A stream of large messages then reads into the same few arrays, which stay in the processor's
 * caches, instead of into fresh ones, which the JVM zeroes and the processor fetches first.
 *
 * <p>Reads of at least {@value #MIN_BYTES} bytes get an array whose length is theirs rounded up
 * to a multiple of {@value #STEP} bytes, so an array given back fits every read of its size class;
 * the bytes past the read's own are left from an earlier read and are never read or sent. Shorter
 * reads get an array of exactly their length, from the heap. One pool serves the whole JVM. Each
 * size class is a stack, so the array given back last is taken first. Each class always keeps
 * up to {@value #CLASS_SHARE_BYTES} bytes of arrays (4 of 128 KiB, 32 of 16 KiB), and up to
 * {@value #MAX_CLASS_BYTES} while the whole pool holds less than 16 MiB: a stream whose readers
 * hold many of its messages at once (a wss stream of 64 KiB messages holds about 32) gets back
 * every array, and no class's arrays, given back in a burst, can keep the others out. An array
 * given back past that is left to the garbage collector. The pool holds at most about 30.5 MiB:
 * 16 MiB, and the 29 classes' shares (14.5 MiB).
 *
 * <p>With {@link BufferChecks#ON}, an array given back is filled with {@link BufferChecks#POISON}
 * (a socket still sending it sends poison), an array given back while the pool holds it is a
 * fault, and so is an array taken again that is not all poison (written after it was given back).
 */
public final class ReadArrays {
  /** The shortest read that gets an array from the pool. */
  public static final int MIN_BYTES = 16 * 1024;
  /** Pooled arrays' lengths are multiples of this. */
  static final int STEP = 4 * 1024;
  /** The longest read that gets an array from the pool (a socket read takes at most this). */
  public static final int MAX_BYTES = 128 * 1024;
  /** What each size class may always keep. */
  static final int CLASS_SHARE_BYTES = 512 * 1024;
  /** The most a size class keeps past its share, while the pool holds less than {@link #SHARED_BYTES}. */
  static final int MAX_CLASS_BYTES = 4 * 1024 * 1024;
  /** Past this, the pool keeps no more than each class's share. */
  static final long SHARED_BYTES = 16L * 1024 * 1024;

  @SuppressWarnings("unchecked")
  private static final ConcurrentLinkedDeque<byte[]>[] CLASSES = new ConcurrentLinkedDeque[MAX_BYTES / STEP + 1];
  /** How many arrays each size class holds now. */
  private static final AtomicIntegerArray HELD = new AtomicIntegerArray(CLASSES.length);
  /** Bytes of the arrays the pool holds now. */
  private static final AtomicLong POOLED = new AtomicLong();
  private static final LongAdder REUSED = new LongAdder();
  private static final LongAdder MADE = new LongAdder();
  /** With {@link BufferChecks#ON}: the arrays the pool holds now. */
  private static final Set<byte[]> HOLDING = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

  static {
    for (int i = MIN_BYTES / STEP; i < CLASSES.length; i++) {
      CLASSES[i] = new ConcurrentLinkedDeque<>();
    }
  }

  private ReadArrays() {}

  /**
   * An array for a read of {@code bytes}: of exactly that length when it is shorter than {@value
   * #MIN_BYTES} or longer than {@value #MAX_BYTES}, otherwise of at least that length, given back
   * by an earlier read's message if the pool has one.
   */
  public static byte[] take(int bytes) {
    if (!pooled(bytes)) {
      return new byte[bytes];
    }
    int sizeClass = (bytes + STEP - 1) / STEP;
    byte[] array = CLASSES[sizeClass].pollFirst();
    if (array == null) {
      MADE.increment();
      return new byte[sizeClass * STEP];
    }
    HELD.decrementAndGet(sizeClass);
    POOLED.addAndGet(-array.length);
    REUSED.increment();
    if (BufferChecks.ON) {
      HOLDING.remove(array);
      checkPoisoned(array);
    }
    return array;
  }

  /** The first {@code bytes} bytes of {@code from} in an array {@link #take} gives for them. */
  public static byte[] copyOf(byte[] from, int bytes) {
    if (!pooled(bytes)) {
      return Arrays.copyOf(from, bytes); // the JIT need not zero an array it fills whole
    }
    byte[] array = take(bytes);
    System.arraycopy(from, 0, array, 0, bytes);
    return array;
  }

  /** Whether a read of {@code bytes} gets an array of the pool's sizes. */
  public static boolean pooled(int bytes) {
    return bytes >= MIN_BYTES && bytes <= MAX_BYTES;
  }

  /** Gives back an array taken here, which nothing reads or writes any more. */
  public static void giveBack(byte[] array) {
    int length = array.length;
    if (!pooled(length) || length % STEP != 0) {
      return; // not a pooled size: the read that took it got a new array of its own length
    }
    if (BufferChecks.ON) {
      if (!HOLDING.add(array)) {
        BufferChecks.fault("an array was given back to the read-array pool twice", null);
      }
      Arrays.fill(array, BufferChecks.POISON);
    }
    int sizeClass = length / STEP;
    long classBytes = (long) HELD.incrementAndGet(sizeClass) * length;
    if (classBytes > CLASS_SHARE_BYTES && (classBytes > MAX_CLASS_BYTES || POOLED.get() >= SHARED_BYTES)) {
      HELD.decrementAndGet(sizeClass);
      if (BufferChecks.ON) {
        HOLDING.remove(array);
      }
      return;
    }
    POOLED.addAndGet(length);
    CLASSES[sizeClass].offerFirst(array);
  }

  private static void checkPoisoned(byte[] array) {
    for (int i = 0; i < array.length; i++) {
      if (array[i] != BufferChecks.POISON) {
        BufferChecks.fault("byte " + i + " of an array was written after it was given back to the read-array pool", null);
        return;
      }
    }
  }

  /** Reads that took an array given back by an earlier one. */
  public static long reused() {
    return REUSED.sum();
  }

  /** Reads that took a new array of a pooled size, the pool having none of theirs. */
  public static long made() {
    return MADE.sum();
  }

  /** Bytes of the arrays the pool holds now. */
  public static long pooledBytes() {
    return POOLED.get();
  }
}
