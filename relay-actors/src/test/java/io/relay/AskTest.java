package io.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.testing.Await;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class AskTest {
  private static final ActorTestKit KIT = ActorTestKit.create("ask-test");

  private record Echo(String text, ActorRef<String> replyTo) {}

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void callbacksOnAnAnswerRunOnTheDispatcherNotOnNewThreads() throws Exception {
    TestProbe<Echo> echo = KIT.createTestProbe();
    long threadsBefore = Thread.getAllStackTraces().size();
    for (int i = 0; i < 200; i++) {
      String text = "ping " + i;
      CompletableFuture<String> result =
          Ask.<Echo, String>ask(echo.ref(), replyTo -> new Echo(text, replyTo), Duration.ofSeconds(3), KIT.system())
              .thenApply(answer -> answer + " on " + Thread.currentThread().getName());
      Echo asked = echo.expectMessageClass(Echo.class);
      asked.replyTo().tell(asked.text());
      String answered = Await.value("the echo's answer", Duration.ofSeconds(5), result);
      assertTrue(answered.startsWith(text + " on ask-test-pekko.actor.default-dispatcher-"),
          "the callback ran on the actor system's dispatcher, not on a thread of its own: " + answered);
    }
    long grown = Thread.getAllStackTraces().size() - threadsBefore;
    assertTrue(grown < 20, "200 asks left " + grown + " more live threads");
  }

  /**
   * {@code ActorContext.ask} hands each answer on through the JDK's default async executor, which
   * on two cores or fewer (as in CI) starts a thread per answer; {@link Ask#fromActor} does not.
   */
  @Test
  void answersToAnActorStartNoThreadEach() {
    int asks = 200;
    TestProbe<Echo> echo = KIT.createTestProbe();
    TestProbe<String> seen = KIT.createTestProbe();
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long startedBefore = threads.getTotalStartedThreadCount();
    KIT.spawn(
        Behaviors.<String>setup(
            context -> {
              for (int i = 0; i < asks; i++) {
                String text = "ping " + i;
                Ask.<String, Echo, String>fromActor(
                    context, echo.ref(), replyTo -> new Echo(text, replyTo), Duration.ofSeconds(10), (answer, failure) -> answer);
              }
              return Behaviors.receiveMessage(
                  answer -> {
                    seen.ref().tell(answer);
                    return Behaviors.same();
                  });
            }));
    for (int i = 0; i < asks; i++) {
      Echo asked = echo.expectMessageClass(Echo.class);
      asked.replyTo().tell(asked.text());
    }
    for (int i = 0; i < asks; i++) {
      assertTrue(seen.receiveMessage().startsWith("ping "), "every answer reaches the actor");
    }
    long started = threads.getTotalStartedThreadCount() - startedBefore;
    assertTrue(started < 20, asks + " answers to an actor started " + started + " threads");
  }

  @Test
  void aTimeoutFailsTheAnswer() {
    ActorRef<Echo> silent = KIT.spawn(Behaviors.receiveMessage(m -> Behaviors.same()));
    CompletableFuture<String> answer =
        Ask.ask(silent, replyTo -> new Echo("x", replyTo), Duration.ofMillis(100), KIT.system());
    Throwable failure = Await.value("the ask to a silent actor to end", Duration.ofSeconds(5), answer.handle((value, e) -> e));
    assertEquals("TimeoutException", failure.getClass().getSimpleName(), "a silent actor times the ask out");
  }
}
