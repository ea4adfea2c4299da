package io.relay;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.RecipientRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.japi.function.Function;

/**
 * Asking an actor from outside one (routes, shutdown tasks), with the answer handed on through the
 * actor system's dispatcher.
 *
 * <p>Pekko's {@link AskPattern} answers with Scala's {@code CompletionStage} adapter, which runs
 * even the plain {@code thenApply}/{@code thenCompose} callbacks on the JDK's default async
 * executor. On a machine or container with two or fewer cores that executor is not a pool: it
 * starts a new thread for every callback. A connection's path chains several asks (deny list,
 * code store, topic registry), so this cost a node thousands of short-lived threads a second under
 * a reconnect burst (see docs/benchmarks.md). The future returned here is a plain one, completed
 * on a dispatcher thread, so callbacks chained on it run there.
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
}
