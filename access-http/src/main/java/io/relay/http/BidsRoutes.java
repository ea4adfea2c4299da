package io.relay.http;

import io.relay.Ask;
import io.relay.deny.DenyList;
import io.relay.metrics.RelayMetrics;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/** {@code /bids/deny} and {@code /bids/allow}: the cluster-wide deny list, for relay admins. */
final class BidsRoutes extends AllDirectives {
  private static final String ADMIN = "relay:admin";

  private final AccessGuard guard;
  private final HttpSettings settings;
  private final ActorRef<DenyList.Command> denyList;
  private final RelayMetrics metrics;
  private final ActorSystem<?> system;

  BidsRoutes(
      AccessGuard guard,
      HttpSettings settings,
      ActorRef<DenyList.Command> denyList,
      RelayMetrics metrics,
      ActorSystem<?> system) {
    this.guard = guard;
    this.settings = settings;
    this.denyList = denyList;
    this.metrics = metrics;
    this.system = system;
  }

  Route route() {
    return pathPrefix("bids", () -> concat(list("deny", true), list("allow", false)));
  }

  private Route list(String name, boolean denied) {
    return path(
        name,
        () ->
            optionalHeaderValueByName(
                "Authorization",
                authorization ->
                    concat(
                        post(
                            () ->
                                parameterOptional(
                                    "bid",
                                    bid ->
                                        parameterOptional(
                                            "exp",
                                            exp ->
                                                completeWithFuture(
                                                    guard.withScope(
                                                        authorization,
                                                        ADMIN,
                                                        claims -> set(bid, exp, denied)))))),
                        get(
                            () ->
                                completeWithFuture(
                                    guard.withScope(authorization, ADMIN, claims -> read(denied)))))));
  }

  private CompletionStage<HttpResponse> set(Optional<String> bid, Optional<String> exp, boolean denied) {
    String bookingId =
        bid.filter(b -> !b.isBlank()).orElseThrow(() -> new ApiException(400, "missing bid parameter"));
    long expiresAt = exp.map(BidsRoutes::epochSeconds).orElseThrow(() -> new ApiException(400, "missing exp parameter"));
    return Ask.<DenyList.Command, Boolean>ask(
            denyList,
            replyTo -> new DenyList.Set(bookingId, denied, expiresAt, replyTo),
            settings.askTimeout(),
            system)
        .thenApply(
            stored -> {
              if (!stored) {
                return Json.error(503, "could not replicate the change to a majority of nodes; try again");
              }
              (denied ? metrics.denies : metrics.allows).inc();
              return HttpResponse.create().withStatus(StatusCodes.NO_CONTENT);
            });
  }

  private CompletionStage<HttpResponse> read(boolean denied) {
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
