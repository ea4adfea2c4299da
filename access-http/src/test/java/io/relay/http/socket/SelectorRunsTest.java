package io.relay.http.socket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The connections' dispatcher as its configuration builds it: an actor told something by a
 * selector thread runs on that thread when the selector gets to it, for at most the selector's
 * time per round, and on the pool otherwise; one told by any other thread runs on the pool; and a
 * selector thread that stops hands what it has not run to the pool.
 */
class SelectorRunsTest {
  private static final long DEADLINE_SECONDS = TestSockets.DEADLINE.toSeconds();

  private ActorSystem<Void> system;

  /** Where a message was handled: the future completes with the handling thread. */
  private record Handle(long spinNanos, CompletableFuture<Thread> handled) {}

  @BeforeEach
  void start() {
    system = ActorSystem.create(Behaviors.empty(), "selector-runs-test", ConfigFactory.load());
  }

  @AfterEach
  void stop() throws Exception {
    TestSockets.terminate(system);
  }

  @Test
  void whatASelectorThreadWakesRunsOnItWhenItGetsThere() throws Exception {
    ActorRef<Handle> actor = connectionActor("woken");
    List<Thread> threads = round(0, actor);
    assertEquals(Thread.currentThread(), threads.get(0), "the thread that handled the message");
  }

  @Test
  void whatOtherThreadsWakeRunsOnThePool() throws Exception {
    ActorRef<Handle> actor = connectionActor("pooled");
    CompletableFuture<Thread> handled = new CompletableFuture<>();
    actor.tell(new Handle(0, handled));
    Thread thread = handled.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
    assertNotEquals(Thread.currentThread(), thread);
    assertTrue(thread.getName().contains("relay-connections-dispatcher"), "handled on " + thread.getName());
  }

  @Test
  void pastItsTimePerRoundASelectorThreadHandsTheRestToThePool() throws Exception {
    long spin = SelectorRuns.RUN_NANOS * 4 / 5;
    List<Thread> threads = round(spin, connectionActor("first"), connectionActor("second"), connectionActor("third"));
    assertEquals(Thread.currentThread(), threads.get(0), "the first actor ran on the selector thread");
    assertNotEquals(Thread.currentThread(), threads.get(2), "the third actor, past the selector's time, ran on the pool");
  }

  @Test
  void aSelectorThreadThatStopsHandsWhatItHasNotRunToThePool() throws Exception {
    ActorRef<Handle> actor = connectionActor("left");
    SelectorRuns.adopt();
    CompletableFuture<Thread> handled = new CompletableFuture<>();
    actor.tell(new Handle(0, handled));
    SelectorRuns.release();
    assertNotEquals(Thread.currentThread(), handled.get(DEADLINE_SECONDS, TimeUnit.SECONDS));
  }

  /**
   * One round of a selector thread (this one) that wakes {@code actors} (each handles its message
   * after spinning {@code spinNanos}) and then runs what it woke; the threads that handled the messages, in order. A round in which an actor was still ending
   * its last run on the pool (so that telling it scheduled nothing) is tried again, until the
   * test's deadline: on a busy machine the pool thread ending that run may wait for a core.
   */
  @SafeVarargs
  private static List<Thread> round(long spinNanos, ActorRef<Handle>... actors) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DEADLINE_SECONDS);
    int attempts = 0;
    while (System.nanoTime() - deadline < 0) {
      attempts++;
      List<CompletableFuture<Thread>> handled = new ArrayList<>();
      SelectorRuns.adopt();
      try {
        for (ActorRef<Handle> actor : actors) {
          CompletableFuture<Thread> future = new CompletableFuture<>();
          handled.add(future);
          actor.tell(new Handle(spinNanos, future));
        }
        boolean allScheduled = SelectorRuns.queued() == actors.length;
        SelectorRuns.runQueued();
        List<Thread> threads = new ArrayList<>();
        for (CompletableFuture<Thread> future : handled) {
          threads.add(future.get(DEADLINE_SECONDS, TimeUnit.SECONDS));
        }
        if (allScheduled) {
          return threads;
        }
      } finally {
        SelectorRuns.release();
      }
      Thread.yield(); // let the pool thread end the actors' last run
    }
    throw new AssertionError("in " + attempts + " rounds, telling the actors never scheduled all of them from this thread");
  }

  /** An actor on the connections' dispatcher that handles each message after spinning for a while. */
  private ActorRef<Handle> connectionActor(String name) throws Exception {
    CompletableFuture<ActorRef<Handle>> spawned = new CompletableFuture<>();
    // spawned from a thread of the pool, so that its start does not run on the test's thread
    system.systemActorOf(
        Behaviors.<Void>setup(
            context -> {
              spawned.complete(
                  context.spawn(
                      Behaviors.receiveMessage(
                          handle -> {
                            long until = System.nanoTime() + handle.spinNanos();
                            while (System.nanoTime() - until < 0) {
                              Thread.onSpinWait();
                            }
                            handle.handled().complete(Thread.currentThread());
                            return Behaviors.same();
                          }),
                      name,
                      DispatcherSelector.fromConfig(ClientStreams.DISPATCHER)));
              return Behaviors.empty();
            }),
        "spawner-" + name,
        Props.empty());
    ActorRef<Handle> actor = spawned.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
    awaitStarted(actor);
    return actor;
  }

  /** Waits until the actor has handled a first message on the pool, so that it has started. */
  private static void awaitStarted(ActorRef<Handle> actor) throws Exception {
    CompletableFuture<Thread> started = new CompletableFuture<>();
    actor.tell(new Handle(0, started));
    started.get(DEADLINE_SECONDS, TimeUnit.SECONDS);
  }
}
