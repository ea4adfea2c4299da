package io.relay.http;

import io.relay.Ask;
import io.relay.RelaySettings;
import io.relay.codes.CodeGrant;
import io.relay.codes.CodeStore;
import io.relay.deny.DenyList;
import io.relay.deny.DenyVerdicts;
import io.relay.http.log.WarningLimiter;
import io.relay.metrics.RelayMetrics;
import io.relay.topic.Connection;
import io.relay.topic.ConnectionHandler;
import io.relay.topic.OutboundQueue;
import io.relay.topic.TopicActor;
import io.relay.topic.TopicRegistry;
import io.relay.ws.Handshake;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Admits a WebSocket client to its topic once {@link RelayUpgrade} has read its upgrade
 * request (on plain and TLS relay ports alike). In order: the topic named by the path, whether the node admits at
 * all now (draining; deny list read from a majority), then, once the caller has checked the
 * upgrade, the one-time code (redeemed cluster-wide, {@link CodeStore}), the booking's deny
 * verdict, the token's expiry, and the join at the topic's actor. A refusal is an {@link
 * ApiException} with the status to answer; {@link #refusal} turns any failure into the status,
 * line and headers the client gets.
 */
final class Admission {
  private final HttpSettings settings;
  private final RelaySettings relaySettings;
  private final ActorRef<CodeStore.Command> codes;
  private final DenyVerdicts denyVerdicts;
  private final BooleanSupplier denyListRead;
  private final ActorRef<TopicRegistry.Command> registry;
  private final RelayMetrics metrics;
  private final ActorSystem<?> system;
  private final BooleanSupplier draining;
  private final WarningLimiter errors;
  private final AtomicLong connectionIds = new AtomicLong();

  /** The refusal a client gets: a status, a one-line body, and headers. */
  record Refusal(int status, String line, Map<String, String> headers) {}

  Admission(
      HttpSettings settings,
      RelaySettings relaySettings,
      ActorRef<CodeStore.Command> codes,
      DenyVerdicts denyVerdicts,
      BooleanSupplier denyListRead,
      ActorRef<TopicRegistry.Command> registry,
      RelayMetrics metrics,
      ActorSystem<?> system,
      BooleanSupplier draining,
      WarningLimiter errors) {
    this.settings = settings;
    this.relaySettings = relaySettings;
    this.codes = codes;
    this.denyVerdicts = denyVerdicts;
    this.denyListRead = denyListRead;
    this.registry = registry;
    this.metrics = metrics;
    this.system = system;
    this.draining = draining;
    this.errors = errors;
  }

  /**
   * The topic of a {@code /session/...} path (the part after {@code /session}), if the node
   * admits clients now.
   *
   * @throws ApiException 400 for a bad topic, 503 while draining or before the deny list is read
   */
  String topic(String unmatchedPath) {
    String topic = TopicPath.parse(unmatchedPath, metrics);
    if (draining.getAsBoolean()) {
      throw new ApiException(503, "node is draining; reconnect with a new code");
    }
    if (!denyListRead.getAsBoolean()) {
      throw ApiException.denyListUnread(metrics, "relay");
    }
    return topic;
  }

  /**
   * Redeems {@code code} for {@code topic} and joins the topic: the handler to serve the
   * connection's channel once the {@code 101} is written.
   *
   * @param code the request's code, or null when it has none
   * @param userAgent the client's {@code User-Agent}, or empty
   * @param remoteAddress the client's address as its reports show it
   */
  CompletionStage<ConnectionHandler> admit(String topic, String code, String userAgent, String remoteAddress) {
    if (code == null || code.isEmpty()) {
      return CompletableFuture.failedFuture(refused("missing", "missing code"));
    }
    return Ask.<CodeStore.Command, CodeStore.Redemption>ask(
            codes, replyTo -> new CodeStore.Redeem(code, topic, replyTo), settings.askTimeout(), system)
        .thenCompose(
            redemption -> {
              if (redemption instanceof CodeStore.Rejected rejected) {
                if (rejected.reason() == CodeStore.Reason.UNAVAILABLE) {
                  metrics.codesRefused.labelValues("unavailable").inc();
                  throw new ApiException(503, "the node that issued the code did not confirm it in time; retry");
                }
                throw refused(rejected.reason().name().toLowerCase(Locale.ROOT), message(rejected.reason()));
              }
              return join(((CodeStore.Redeemed) redemption).grant(), userAgent, remoteAddress);
            });
  }

  private CompletionStage<ConnectionHandler> join(CodeGrant grant, String userAgent, String remoteAddress) {
    DenyList.Verdict verdict = denyVerdicts.verdict(grant.bookingId());
    if (verdict == DenyList.Verdict.UNREAD) {
      throw ApiException.denyListUnread(metrics, "relay");
    }
    if (verdict == DenyList.Verdict.DENIED) {
      metrics.codesRefused.labelValues("denied").inc();
      throw new ApiException(403, "booking denied");
    }
    Instant expiresAt = Instant.ofEpochSecond(grant.tokenExpiresAt());
    if (!expiresAt.isAfter(Instant.now().minus(settings.tokenLeeway()))) { // the skew allowance the access API gave it
      throw refused("token_expired", "token expired");
    }
    Connection.Grant info =
        new Connection.Grant(grant.topic(), grant.bookingId(), grant.scopes(), Instant.now(), expiresAt, remoteAddress, userAgent);
    OutboundQueue outbound = new OutboundQueue(relaySettings.bufferSize(), relaySettings.bufferBytes(), metrics.readerFramesDiscarded);
    Connection connection = new Connection(connectionIds.incrementAndGet(), info, outbound);
    return Ask.<TopicRegistry.Command, TopicActor.JoinResult>ask(
            registry, replyTo -> new TopicRegistry.Join(connection, replyTo), settings.askTimeout(), system)
        .whenComplete((result, unanswered) -> { if (unanswered != null) connection.abandonAdmission(); }) // refused with 503
        .thenApply(
            result -> {
              if (result instanceof TopicActor.Refused refused) {
                long retryAfter = refused.retryAfter() == null ? 0 : Math.max(1, refused.retryAfter().toSeconds());
                throw new ApiException(refused.status(), refused.message(), retryAfter);
              }
              return ((TopicActor.Joined) result).handler();
            });
  }

  /**
   * What the client is told for {@code failure}: an {@link ApiException}'s status and message
   * (503 with {@code Retry-After}, 426 with the version the node speaks, 405 with the one method
   * the relay port takes), 503 when an actor did not answer in time, otherwise 500 (logged,
   * rate-limited).
   */
  Refusal refusal(Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof ApiException api) {
      return switch (api.status()) {
        case 503 -> new Refusal(503, api.getMessage(), Map.of("Retry-After", String.valueOf(Math.max(1, api.retryAfterSeconds()))));
        case 426 -> new Refusal(426, api.getMessage(), Map.of("Sec-WebSocket-Version", Handshake.VERSION));
        case 405 -> new Refusal(405, api.getMessage(), Map.of("Allow", "GET"));
        default -> new Refusal(api.status(), api.getMessage(), Map.of());
      };
    }
    if (cause instanceof TimeoutException) {
      metrics.requestTimeouts.inc();
      return new Refusal(503, "the relay did not answer in time", Map.of("Retry-After", "1"));
    }
    errors.error("admitting a connection failed", cause);
    return new Refusal(500, "internal error", Map.of());
  }

  private ApiException refused(String reason, String message) {
    metrics.codesRefused.labelValues(reason).inc();
    return new ApiException(401, message);
  }

  private static String message(CodeStore.Reason reason) {
    return switch (reason) {
      case UNKNOWN -> "unknown code";
      case USED -> "code already used";
      case EXPIRED -> "code expired";
      case WRONG_TOPIC -> "code is for another topic";
      case ISSUER_GONE -> "the node that issued the code has left; fetch a new code";
      case UNAVAILABLE -> "code could not be checked";
    };
  }
}
