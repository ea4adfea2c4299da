package io.relay.http;

import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoop;
import io.relay.deny.DenyList;
import io.relay.http.log.WarningLimiter;
import io.relay.http.server.PortCounters;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;
import org.slf4j.LoggerFactory;

/**
 * Builds the access API's route tree and what serves the node's client ports: the access API's
 * requests and the WebSocket relay's upgrades.
 */
public final class HttpApi extends AllDirectives {
  private final HttpSettings settings;
  private final RelayServices services;
  private final ActorSystem<?> system;
  private final AdmissionGate admissions;
  /** Unexpected failures of requests (500s): clients may find a way to cause them. */
  private final WarningLimiter errors;
  private final Admission admission;
  private final AccessGuard guard;
  private final SessionRoutes sessions;
  private final Cors cors;
  private final HttpResponse busy = Json.error(503, "the node is admitting as many clients as it can; retry");

  /** @param draining whether the node is draining: the relay then refuses new connections with 503 */
  public HttpApi(HttpSettings settings, TokenKeys keys, RelayServices services, ActorSystem<?> system, BooleanSupplier draining) {
    this.settings = settings;
    this.services = services;
    this.system = system;
    this.admissions =
        new AdmissionGate(settings.maxAdmissionsInFlight(), services.metrics().admissionsRefused::inc);
    services.metrics().gauge("relay_admissions_in_flight", "Codes being issued and connections being admitted now", admissions::inFlight);
    this.errors = WarningLimiter.start(system, LoggerFactory.getLogger(HttpApi.class), settings.logLimitInterval());
    // one for the node's relay ports: it numbers the node's connections
    this.admission =
        new Admission(
            settings,
            services.settings(),
            services.codes(),
            services.denyListStatus(),
            services.denyListStatus()::isRead,
            services.registry(),
            services.metrics(),
            system,
            draining,
            errors);
    TokenVerifier tokens =
        new TokenVerifier(
            settings, keys, settings.tokenCacheSize(), services.metrics().tokensCached::inc, () -> System.currentTimeMillis() / 1000);
    this.guard = new AccessGuard(tokens, errors, services.metrics());
    this.sessions =
        new SessionRoutes(
            guard,
            settings,
            services.codes(),
            services.denyListStatus(),
            services.metrics(),
            system);
    this.cors = new Cors(settings);
  }

  /**
   * The access API; every refusal, including unknown paths, is a JSON error; with CORS for the
   * configured origins ({@link Cors}).
   */
  public Route accessRoute() {
    Route session = sessions.route();
    Route routes =
        concat(
            // only code requests count as admissions: /bids and /status stay open under a flood
            extractUnmatchedPath(path -> SessionRoutes.isSessionPath(path) ? post(() -> admissions.admit(busy, () -> session)) : reject()),
            new BidsRoutes(
                    guard,
                    settings,
                    services.settings().denyMaxLifetime(),
                    DenyList.answeredWithin(services.settings()).plus(settings.askTimeout()),
                    services.denyList(),
                    services.denyListStatus()::isRead,
                    services.metrics(),
                    system)
                .route(),
            new StatusRoutes(
                    guard,
                    services.clusterStatus(),
                    services.settings().statusAnswerTimeout(),
                    system)
                .route());
    return cors.wrap(routes.seal(jsonRejections(), jsonExceptions()));
  }

  /**
   * What serves an access port's connections, after their TLS and head timeout: Netty reads each
   * request and {@link #accessRoute} answers it in process ({@link AccessRequests}).
   */
  public Consumer<ChannelPipeline> accessPort(PortCounters counters, Duration idleTimeout) {
    Function<HttpRequest, CompletionStage<HttpResponse>> route = accessRoute().handler(system);
    Materializer materializer = Materializer.matFromSystem(system);
    CodeRequests codes = new CodeRequests(sessions, admissions, cors, busy);
    return pipeline -> AccessRequests.install(pipeline, route, codes, cors, materializer, idleTimeout, counters, errors);
  }

  /**
   * What serves a relay port's connections: the WebSocket upgrade ({@link RelayUpgrade}).
   *
   * @param homes the event loop of each topic's connections
   */
  public Consumer<ChannelPipeline> relayPort(PortCounters counters, java.util.function.Function<String, EventLoop> homes) {
    return pipeline -> RelayUpgrade.install(pipeline, admission, admissions, counters, errors, homes);
  }

  private ExceptionHandler jsonExceptions() {
    return ExceptionHandler.newBuilder().matchAny(failure -> complete(guard.toResponse(failure))).build();
  }

  /** Pekko's answers to rejections with a JSON body, their headers kept (a 405's {@code Allow}). */
  private static RejectionHandler jsonRejections() {
    return RejectionHandler.defaultHandler()
        .mapRejectionResponse(response -> Json.error(response.status().intValue(), response.status().reason()).addHeaders(response.getHeaders()));
  }
}
