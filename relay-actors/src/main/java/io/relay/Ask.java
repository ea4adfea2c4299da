package io.relay;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.RecipientRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.japi.function.Function2;

/**
 * Asking an actor, with the answer handed on through the actor system's dispatcher: from outside
 * an actor ({@link #ask}: routes, shutdown tasks) and from inside one ({@link #fromActor}).
 *
 * <p>Pekko's {@link AskPattern} answers with Scala's {@code CompletionStage} adapter, which runs
 * even the plain {@code thenApply}/{@code thenCompose} callbacks on the JDK's default async
 * executor. On a machine or container with two or fewer cores that executor is not a pool: it
 * starts a new thread for every callback. A connection's path chains several asks (deny list,
 * code store, topic registry), so this cost a node thousands of short-lived threads a second under
 * a reconnect burst (see docs/benchmark-notes.md). The future returned here is a plain one, completed
 * on a dispatcher thread, so callbacks chained on it run there. {@code ActorContext.ask} has the
 * same adapter inside: on three nodes every claim of a code at its issuer on another node started
 * a thread for the answer, dozens a second per node in a connect storm.
 */
public final class Ask {
  private Ask() {}

  public static <Req, Res> CompletableFuture<Res> ask(
      RecipientRef<Req> target, Function<ActorRef<Res>, Req> message, Duration timeout, ActorSystem<?> system) {
    CompletableFuture<Res> answer = new CompletableFuture<>();
    AskPattern.ask(target, message, timeout, system.scheduler())
        .whenCompleteAsync(
            (value, failure) -> {
              if (failure != null) {
                answer.completeExceptionally(failure);
              } else {
                answer.complete(value);
              }
            },
            system.executionContext());
    return answer;
  }

  /**
   * What {@code ActorContext.ask} does, without a thread per answer: asks {@code target} and
   * sends the answer, or the failure, adapted by {@code adapt}, to the asking actor itself.
   */
  public static <T, Req, Res> void fromActor(
      ActorContext<T> context, RecipientRef<Req> target, Function<ActorRef<Res>, Req> message, Duration timeout, Function2<Res, Throwable, T> adapt) {
    context.pipeToSelf(ask(target, message, timeout, context.getSystem()), adapt);
  }
}
