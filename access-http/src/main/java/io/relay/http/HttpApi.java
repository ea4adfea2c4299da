package io.relay.http;

import io.relay.RelayServices;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpResponse;
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
  private final AdmissionGate admissions;

  /**
   * @param draining whether the node is draining: the relay then refuses new connections with 503
   */
  public HttpApi(HttpSettings settings, RelayServices services, ActorSystem<?> system, BooleanSupplier draining) {
    this.settings = settings;
    this.services = services;
    this.system = system;
    this.draining = draining;
    this.admissions =
        new AdmissionGate(settings.maxAdmissionsInFlight(), services.metrics().admissionsRefused::inc);
    services.metrics().gauge("relay_admissions_in_flight", "Codes being issued and connections being admitted now", admissions::inFlight);
  }

  /** The access API; every refusal, including unknown paths, is a JSON error. */
  public Route accessRoute() {
    AccessGuard guard = new AccessGuard(new TokenVerifier(settings));
    Route session =
        new SessionRoutes(
                guard, settings, services.settings(), services.codes(), services.denyList(), services.metrics(), system)
            .route();
    HttpResponse busy = Json.error(503, "the node is admitting as many clients as it can; retry");
    Route routes =
        concat(
            // only code requests count as admissions: /bids and /status stay open under a flood
            pathPrefixTest("session", () -> post(() -> admissions.admit(busy, () -> session))),
            session,
            new BidsRoutes(guard, settings, services.denyList(), services.metrics(), system)
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
    return admissions
        .admit(
            RelayRoutes.text(503, "the node is admitting as many clients as it can; retry"),
            () ->
                new RelayRoutes(
                        settings,
                        services.settings(),
                        services.codes(),
                        services.denyList(),
                        services.registry(),
                        services.metrics(),
                        system,
                        draining)
                    .route())
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
