package io.relay.http;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Bounds the admissions a node works on at once (codes being issued, connections being admitted),
 * shared by the access API and the relay: past the bound a request is refused at once with 503
 * and {@code Retry-After}, so that a node flooded with reconnecting clients keeps working at its
 * full rate on the ones it took instead of making every one of them wait until it times out.
 */
public final class AdmissionGate extends AllDirectives {
  private final int limit;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Runnable onRefused;

  /** @param onRefused counts a refusal */
  public AdmissionGate(int limit, Runnable onRefused) {
    this.limit = limit;
    this.onRefused = onRefused;
  }

  /** Admissions being worked on now. */
  public int inFlight() {
    return inFlight.get();
  }

  /**
   * Runs {@code inner} if the node has room for one more admission, until it has answered;
   * otherwise answers {@code busy} (a {@link Json#error} 503, which says when to retry). Room is
   * given back on the thread that completes the route's Scala {@code CompletionStage}, whose plain
   * {@code whenComplete} would start a thread on two or fewer cores (see {@link io.relay.Ask}).
   */
  Route admit(HttpResponse busy, Supplier<Route> inner) {
    return extractRequestContext(
        context ->
            tryEnter() ? mapRouteResultFuture(result -> result.whenCompleteAsync((answered, failure) -> leave(), Runnable::run), inner) : complete(busy));
  }

  /**
   * Takes room for one more admission, to be given back with {@link #leave} once it is answered;
   * false (and counted as refused) when there is none.
   */
  boolean tryEnter() {
    if (inFlight.incrementAndGet() > limit) {
      inFlight.decrementAndGet();
      onRefused.run();
      return false;
    }
    return true;
  }

  /** An admission that {@link #tryEnter} let in was answered. */
  void leave() {
    inFlight.decrementAndGet();
  }
}
