package io.relay.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.prometheus.metrics.core.metrics.Counter;
import io.relay.topic.OutboundQueue;
import io.relay.ws.WsFrames.Frame;
import io.relay.ws.WsFrames;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The node-wide memory budget: frames counted once, and the biggest holders shed past the limit. */
class MemoryBudgetTest {
  /** A connection holding a fixed amount until it is shed. */
  private static final class FakeHolder implements MemoryBudget.Holder {
    final MemoryBudget budget;
    long held;
    boolean shed;

    FakeHolder(MemoryBudget budget, long held) {
      this.budget = budget;
      budget.register(this);
      hold(held);
    }

    /** What the connection does when a frame is queued for it. */
    void hold(long bytes) {
      held += bytes;
      budget.charge(bytes);
    }

    @Override
    public long held() {
      return held;
    }

    @Override
    public void shed() {
      shed = true;
    }

    /** What the connection does once shed: it lets go and ends. */
    void end() {
      letGo();
      budget.unregister(this);
    }

    /** What a shed connection does at once: it lets go of its frames, and ends once its close is answered. */
    void letGo() {
      budget.release(held);
      held = 0;
    }
  }

  /** A client's message as a writer's channel makes it; the maker lets go once it has shared it. */
  private static Frame frame(int size) {
    return WsFrames.message(UnpooledByteBufAllocator.DEFAULT, WsFrames.BINARY, new byte[size], 0, size);
  }

  @Test
  void aFrameSharedByManyReadersCountsOnceUntilTheLastLetsGo() {
    MemoryBudget budget = MemoryBudget.unlimited();
    OutboundQueue a = new OutboundQueue(10, 1 << 20, Counter.builder().name("discarded").build());
    OutboundQueue b = new OutboundQueue(10, 1 << 20, Counter.builder().name("discarded").build());
    OutboundQueue c = new OutboundQueue(10, 1 << 20, Counter.builder().name("discarded").build());
    Frame frame = frame(1000);
    frame.share(budget, 3);
    frame.release();
    a.offer(frame);
    b.offer(frame);
    c.offer(frame);
    assertEquals(1000, budget.used(), "one frame for three readers");
    a.poll().release();
    b.dispose();
    assertEquals(1000, budget.used(), "one reader still holds it");
    c.dropQueued();
    assertEquals(0, budget.used());
  }

  @Test
  void framesDroppedFromAFullQueueOrOfferedToAClosedOneAreReleased() {
    MemoryBudget budget = MemoryBudget.unlimited();
    OutboundQueue queue = new OutboundQueue(2, 1 << 20, Counter.builder().name("discarded").build());
    for (int i = 0; i < 5; i++) {
      Frame frame = frame(100);
      frame.share(budget, 1);
      frame.release();
      queue.offer(frame);
    }
    assertEquals(200, budget.used(), "the three oldest were dropped and released");
    queue.dispose();
    Frame late = frame(100);
    late.share(budget, 1);
    late.release();
    queue.offer(late);
    assertEquals(0, budget.used(), "a disposed queue releases what it held and refuses the rest");
  }

  @Test
  void pastTheLimitTheBiggestHoldersAreShedUntilUnderNineTenths() {
    MemoryBudget budget = new MemoryBudget(1000, (holder, held) -> { });
    FakeHolder small = new FakeHolder(budget, 50);
    FakeHolder big = new FakeHolder(budget, 400);
    FakeHolder bigger = new FakeHolder(budget, 500);
    assertFalse(bigger.shed, "950 of 1000: nothing shed");
    FakeHolder newcomer = new FakeHolder(budget, 100);
    assertTrue(bigger.shed, "1050 of 1000: the biggest holder is shed");
    assertFalse(big.shed, "letting go of 500 brings 1050 under 900");
    assertFalse(small.shed);
    assertFalse(newcomer.shed);
  }

  @Test
  void memoryAboutToBeAllocatedIsRefusedPastTheLimitAndTheBiggestHoldersAreShed() {
    MemoryBudget budget = new MemoryBudget(1000, (holder, held) -> { });
    FakeHolder big = new FakeHolder(budget, 900);
    assertTrue(budget.tryCharge(100), "up to the limit");
    assertFalse(budget.tryCharge(1), "past it");
    assertEquals(1000, budget.used(), "a refused charge is not counted");
    assertTrue(big.shed, "and the biggest holder is shed");
  }

  @Test
  void aShedHolderThatHasNotLetGoYetIsCountedAsLettingGo() {
    List<Long> shedSizes = new ArrayList<>();
    MemoryBudget budget = new MemoryBudget(1000, (holder, held) -> shedSizes.add(held));
    FakeHolder first = new FakeHolder(budget, 600);
    FakeHolder second = new FakeHolder(budget, 300);
    new FakeHolder(budget, 200);
    assertTrue(first.shed);
    new FakeHolder(budget, 10);
    assertFalse(second.shed, "the 600 still to come back cover the next charge: no second shed");
    first.end();
    assertEquals(List.of(600L), shedSizes, "one connection shed, told with what it held");
  }

  @Test
  void aShedHolderThatHasLetGoButNotEndedIsNotCountedAgain() {
    MemoryBudget budget = new MemoryBudget(1000, (holder, held) -> { });
    FakeHolder first = new FakeHolder(budget, 600);
    new FakeHolder(budget, 300);
    new FakeHolder(budget, 200);
    assertTrue(first.shed);
    first.letGo();
    FakeHolder later = new FakeHolder(budget, 500);
    new FakeHolder(budget, 10);
    assertTrue(later.shed, "1010 of 1000 with nothing on its way back: the biggest holder is shed");
  }
}
