package io.relay.http;

import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.parameterOptional;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;

import io.relay.Ask;
import io.relay.deny.DenyCapacity;
import io.relay.deny.DenyList;
import io.relay.metrics.RelayMetrics;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code /bids/deny} and {@code /bids/allow}: the cluster-wide deny list, for relay admins. A booking
 * id is at most {@link DenyCapacity#MAX_BOOKING_ID_BYTES} bytes and {@code exp} lies in the future,
 * at most {@code deny-max-lifetime} ahead (400 otherwise); a new booking beyond the list's capacity
 * gets 507. A change is answered 204 once every reachable member applies it, and 503 with {@code
 * Retry-After} when one does not confirm in time (docs/cluster.md, "A strict deny").
 *
 * @param maxLifetime how far ahead {@code exp} may lie
 * @param changeTimeout how long a change may take to be stored and confirmed
 */
record BidsRoutes(
    AccessGuard guard,
    HttpSettings settings,
    Duration maxLifetime,
    Duration changeTimeout,
    ActorRef<DenyList.Command> denyList,
    BooleanSupplier denyListRead,
    RelayMetrics metrics,
    ActorSystem<?> system) {
  Route route() {
    return pathPrefix("bids", () -> concat(list("deny", true), list("allow", false)));
  }

  private Route list(String name, boolean denied) {
    return path(
        name,
        () ->
            concat(
                post(
                    () ->
                        parameterOptional(
                            "bid", bid -> parameterOptional("exp", exp -> guard.route(AdminGuard.SCOPE, claims -> set(bid, exp, denied))))),
                get(() -> guard.route(AdminGuard.SCOPE, claims -> read(denied)))));
  }

  private CompletionStage<HttpResponse> set(Optional<String> bid, Optional<String> exp, boolean denied) {
    String bookingId =
        bid.filter(b -> !b.isBlank()).orElseThrow(() -> new ApiException(400, "missing bid parameter"));
    if (!DenyCapacity.fits(bookingId)) {
      metrics.limitRefusals.labelValues("booking_id_length").inc();
      throw new ApiException(400, "bid must be at most " + DenyCapacity.MAX_BOOKING_ID_BYTES + " bytes (UTF-8)");
    }
    long expiresAt = exp.map(BidsRoutes::epochSeconds).orElseThrow(() -> new ApiException(400, "missing exp parameter"));
    checkLifetime(expiresAt, System.currentTimeMillis() / 1000);
    requireRead();
    return Ask.<DenyList.Command, DenyList.Outcome>ask(
            denyList,
            replyTo -> new DenyList.Set(bookingId, denied, expiresAt, replyTo),
            changeTimeout,
            system)
        .thenApply(
            outcome ->
                switch (outcome) {
                  case STORED -> {
                    (denied ? metrics.denies : metrics.allows).inc();
                    yield HttpResponse.create().withStatus(StatusCodes.NO_CONTENT);
                  }
                  case FULL -> {
                    metrics.limitRefusals.labelValues("deny_capacity").inc();
                    yield Json.error(
                        507,
                        "the deny list has no room for another booking (at most " + DenyCapacity.DEFAULT.total()
                            + ", spread over its maps); new bookings are refused until entries expire");
                  }
                  case UNREAD -> throw ApiException.denyListUnread(metrics, "bids");
                  case UNAVAILABLE -> {
                    metrics.writesFailed.labelValues("deny").inc();
                    yield Json.error(503, "could not replicate the change to a majority of nodes; try again");
                  }
                  case UNCONFIRMED -> {
                    metrics.denyUnconfirmed.inc();
                    yield Json.error(
                        503, "the change is stored, but a reachable node did not confirm applying it in time; try again");
                  }
                });
  }

  /** {@code exp} must lie in the future and at most {@code maxLifetime} ahead of {@code now}. */
  private void checkLifetime(long expiresAt, long now) {
    if (expiresAt <= now) {
      metrics.limitRefusals.labelValues("deny_exp").inc();
      throw new ApiException(400, "exp must be a unix time in seconds in the future");
    }
    if (expiresAt - now > maxLifetime.toSeconds()) {
      metrics.limitRefusals.labelValues("deny_exp").inc();
      throw new ApiException(400, "exp must be at most " + describe(maxLifetime) + " ahead");
    }
  }

  private void requireRead() {
    if (!denyListRead.getAsBoolean()) {
      throw ApiException.denyListUnread(metrics, "bids");
    }
  }

  private static String describe(Duration duration) {
    return duration.toSeconds() % 86_400 == 0 ? duration.toDays() + " days" : duration.toSeconds() + " seconds";
  }

  private CompletionStage<HttpResponse> read(boolean denied) {
    requireRead();
    return Ask.<DenyList.Command, List<String>>ask(
            denyList,
            replyTo -> new DenyList.ListBookings(denied, replyTo),
            settings.askTimeout(),
            system)
        .thenApply(ids -> Json.ok(Map.of("booking_ids", ids)));
  }

  private static long epochSeconds(String value) {
    try {
      long seconds = Long.parseLong(value);
      if (seconds <= 0) {
        throw new NumberFormatException();
      }
      return seconds;
    } catch (NumberFormatException e) {
      throw new ApiException(400, "exp must be a unix time in seconds");
    }
  }
}
