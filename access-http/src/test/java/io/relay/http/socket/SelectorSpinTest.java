package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** When a selector thread polls before it waits: only after a window in which it was busy. */
class SelectorSpinTest {
  private static final long SPIN = TimeUnit.MICROSECONDS.toNanos(50);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Feeds {@code rounds} rounds of {@code workNanos} each, one every {@code everyNanos}, from {@code from}. */
  private static long rounds(SelectorSpin spin, long from, int rounds, long workNanos, long everyNanos) {
    long t = from;
    for (int i = 0; i < rounds; i++) {
      spin.worked(t, t + workNanos);
      t += everyNanos;
    }
    return t;
  }

  @Test
  void aNewThreadWaitsAtOnce() {
    assertEquals(0, new SelectorSpin(SPIN, 0).nanos());
  }

  @Test
  void aThreadBusyForMostOfAWindowPollsBeforeItWaits() {
    SelectorSpin spin = new SelectorSpin(SPIN, 0);
    rounds(spin, 0, 20, 800_000, MS);
    assertEquals(SPIN, spin.nanos());
  }

  @Test
  void aThreadMostlyIdleWaitsAtOnce() {
    SelectorSpin spin = new SelectorSpin(SPIN, 0);
    rounds(spin, 0, 20, 200_000, MS);
    assertEquals(0, spin.nanos(), "a fifth of its time working");
  }

  @Test
  void aThreadThatStopsBeingBusyStopsPollingWithinTwoWindows() {
    SelectorSpin spin = new SelectorSpin(SPIN, 0);
    long t = rounds(spin, 0, 20, 900_000, MS);
    assertEquals(SPIN, spin.nanos());
    rounds(spin, t, 20, 10_000, MS);
    assertEquals(0, spin.nanos(), "its work dropped to 1 % of its time");
  }

  @Test
  void offNeverPolls() {
    SelectorSpin spin = new SelectorSpin(0, 0);
    rounds(spin, 0, 50, MS, MS);
    assertEquals(0, spin.nanos());
  }
}
