package io.relay.http;

import io.relay.RelayServices;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;

/** Builds the node's two route trees: the access API and the WebSocket relay. */
public final class HttpApi extends AllDirectives {
  private final HttpSettings settings;
  private final RelayServices services;
  private final ActorSystem<?> system;
  private final BooleanSupplier draining;

  /**
   * @param draining whether the node is draining: the relay then refuses new connections with 503
   */
  public HttpApi(HttpSettings settings, RelayServices services, ActorSystem<?> system, BooleanSupplier draining) {
    this.settings = settings;
    this.services = services;
    this.system = system;
    this.draining = draining;
  }

  /** The access API; every refusal, including unknown paths, is a JSON error. */
  public Route accessRoute() {
    AccessGuard guard = new AccessGuard(new TokenVerifier(settings));
    Route routes =
        concat(
            new SessionRoutes(
                    guard,
                    settings,
                    services.settings(),
                    services.codes(),
                    services.denyList(),
                    services.denyListStatus()::isRead,
                    services.metrics(),
                    system)
                .route(),
            new BidsRoutes(
                    guard,
                    settings,
                    services.settings().denyMaxLifetime(),
                    services.denyList(),
                    services.denyListStatus()::isRead,
                    services.metrics(),
                    system)
                .route(),
            new StatusRoutes(
                    guard,
                    services.clusterStatus(),
                    services.settings().statusTimeout().multipliedBy(3),
                    system)
                .route());
    return routes.seal(jsonRejections(), jsonExceptions());
  }

  /** The WebSocket relay; refusals are a plain status with a one-line body. */
  public Route relayRoute() {
    return new RelayRoutes(
            settings,
            services.settings(),
            services.codes(),
            services.denyList(),
            services.denyListStatus()::isRead,
            services.registry(),
            services.metrics(),
            system,
            draining)
        .route()
        .seal();
  }

  private ExceptionHandler jsonExceptions() {
    return ExceptionHandler.newBuilder()
        .matchAny(failure -> complete(AccessGuard.toResponse(failure)))
        .build();
  }

  private static RejectionHandler jsonRejections() {
    return RejectionHandler.defaultHandler()
        .mapRejectionResponse(
            response -> {
              return Json.error(response.status().intValue(), response.status().reason());
            });
  }
}
