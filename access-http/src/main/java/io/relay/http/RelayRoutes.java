package io.relay.http;

import io.relay.Ask;
import io.relay.RelaySettings;
import io.relay.codes.CodeGrant;
import io.relay.codes.CodeStore;
import io.relay.deny.DenyList;
import io.relay.http.log.WarningLimiter;
import io.relay.http.socket.ProtocolSwitch;
import io.relay.metrics.RelayMetrics;
import io.relay.topic.Connection;
import io.relay.topic.TopicActor;
import io.relay.topic.TopicRegistry;
import io.relay.ws.OutboundQueue;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.impl.engine.server.UpgradeToOtherProtocolResponseHeader;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.model.headers.SecWebSocketProtocol;
import org.apache.pekko.http.javadsl.model.ws.WebSocketUpgrade;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * {@code GET /session/{topic}?code=C}: redeems the one-time code and upgrades to the topic's
 * WebSocket, or refuses with a plain status and a one-line body before the upgrade.
 *
 * <p>Pekko HTTP checks the upgrade request (its {@link WebSocketUpgrade} attribute); the relay
 * answers the handshake itself and runs its own WebSocket stage over the connection's bytes. On
 * the node's own sockets the connection then leaves Pekko HTTP altogether ({@link
 * ProtocolSwitch}); on an HTTPS port Pekko HTTP runs the stage over its TLS connection.
 */
final class RelayRoutes extends AllDirectives {
  /** The subprotocol browsers of practable's clients ask for. */
  private static final String NULL_PROTOCOL = "null";
  /** RFC 6455 section 1.3: appended to the client's key before hashing it into the answer. */
  private static final String ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  /** The one WebSocket version there is (RFC 6455 section 4.4). */
  private static final String WEBSOCKET_VERSION = "13";

  private final HttpSettings settings;
  private final RelaySettings relaySettings;
  private final ActorRef<CodeStore.Command> codes;
  private final ActorRef<DenyList.Command> denyList;
  private final BooleanSupplier denyListRead;
  private final ActorRef<TopicRegistry.Command> registry;
  private final RelayMetrics metrics;
  private final ActorSystem<?> system;
  private final BooleanSupplier draining;
  private final WarningLimiter errors;
  private final AtomicLong connectionIds = new AtomicLong();

  RelayRoutes(
      HttpSettings settings,
      RelaySettings relaySettings,
      ActorRef<CodeStore.Command> codes,
      ActorRef<DenyList.Command> denyList,
      BooleanSupplier denyListRead,
      ActorRef<TopicRegistry.Command> registry,
      RelayMetrics metrics,
      ActorSystem<?> system,
      BooleanSupplier draining,
      WarningLimiter errors) {
    this.draining = draining;
    this.errors = errors;
    this.settings = settings;
    this.relaySettings = relaySettings;
    this.codes = codes;
    this.denyList = denyList;
    this.denyListRead = denyListRead;
    this.registry = registry;
    this.metrics = metrics;
    this.system = system;
  }

  Route route() {
    return pathPrefix(
        "session",
        () ->
            extractUnmatchedPath(
                path ->
                    get(
                        () ->
                            extractRequest(
                                request ->
                                    parameterOptional(
                                        "code",
                                        code ->
                                            completeWithFuture(
                                                accept(path, code, request).exceptionally(this::refusal)))))));
  }

  private CompletionStage<HttpResponse> accept(String path, Optional<String> code, HttpRequest request) {
    try {
      String topic = TopicPath.parse(path);
      if (draining.getAsBoolean()) {
        throw new ApiException(503, "node is draining; reconnect with a new code");
      }
      if (!denyListRead.getAsBoolean()) {
        throw unread();
      }
      Optional<WebSocketUpgrade> upgrade = request.getAttribute(AttributeKeys.webSocketUpgrade);
      if (upgrade.isEmpty()) {
        Optional<String> version = request.getHeader("Sec-WebSocket-Version").map(h -> h.value().trim());
        if (version.isPresent() && !version.get().equals(WEBSOCKET_VERSION)) {
          throw new ApiException(426, "unsupported WebSocket version; this server speaks " + WEBSOCKET_VERSION);
        }
        throw new ApiException(400, "expected a WebSocket upgrade");
      }
      String presented = code.filter(c -> !c.isEmpty()).orElseThrow(() -> refused("missing", "missing code"));
      return Ask.<CodeStore.Command, CodeStore.Redemption>ask(
              codes,
              replyTo -> new CodeStore.Redeem(presented, topic, replyTo),
              settings.askTimeout(),
              system)
          .thenCompose(
              redemption -> {
                if (redemption instanceof CodeStore.Rejected rejected) {
                  if (rejected.reason() == CodeStore.Reason.UNAVAILABLE) {
                    metrics.codesRefused.labelValues("unavailable").inc();
                    throw new ApiException(503, "the node that issued the code did not confirm it in time; retry");
                  }
                  throw refused(rejected.reason().name().toLowerCase(Locale.ROOT), message(rejected.reason()));
                }
                return admit(((CodeStore.Redeemed) redemption).grant(), request, upgrade.get());
              });
    } catch (ApiException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private CompletionStage<HttpResponse> admit(CodeGrant grant, HttpRequest request, WebSocketUpgrade upgrade) {
    return Ask.<DenyList.Command, DenyList.Verdict>ask(
            denyList,
            replyTo -> new DenyList.Check(grant.bookingId(), replyTo),
            settings.askTimeout(),
            system)
        .thenCompose(
            verdict -> {
              if (verdict == DenyList.Verdict.UNREAD) {
                throw unread();
              }
              if (verdict == DenyList.Verdict.DENIED) {
                metrics.codesRefused.labelValues("denied").inc();
                throw new ApiException(403, "booking denied");
              }
              Instant expiresAt = Instant.ofEpochSecond(grant.tokenExpiresAt());
              if (!expiresAt.isAfter(Instant.now())) {
                throw refused("token_expired", "token expired");
              }
              Connection connection = connection(grant, expiresAt, request);
              return Ask.<TopicRegistry.Command, TopicActor.JoinResult>ask(
                  registry,
                  replyTo -> new TopicRegistry.Join(connection, replyTo),
                  settings.askTimeout(),
                  system);
            })
        .thenApply(result -> upgrade(result, request, upgrade));
  }

  private Connection connection(CodeGrant grant, Instant expiresAt, HttpRequest request) {
    Connection.Grant info =
        new Connection.Grant(
            grant.topic(),
            grant.bookingId(),
            grant.scopes(),
            Instant.now(),
            expiresAt,
            remoteAddress(request),
            request.getHeader("User-Agent").map(h -> h.value()).orElse(""));
    return new Connection(
        connectionIds.incrementAndGet(),
        info,
        new OutboundQueue(relaySettings.bufferSize(), relaySettings.bufferBytes()));
  }

  private static HttpResponse upgrade(TopicActor.JoinResult result, HttpRequest request, WebSocketUpgrade upgrade) {
    if (result instanceof TopicActor.Refused refused) {
      HttpResponse response = text(refused.status(), refused.message());
      return refused.retryAfter() == null
          ? response
          : response.addHeader(RawHeader.create("Retry-After", String.valueOf(Math.max(1, refused.retryAfter().toSeconds()))));
    }
    var flow = ((TopicActor.Joined) result).flow();
    boolean wantsNull = false;
    for (String protocol : upgrade.getRequestedProtocols()) {
      wantsNull |= NULL_PROTOCOL.equals(protocol);
    }
    HttpResponse switching =
        HttpResponse.create()
            .withStatus(StatusCodes.SWITCHING_PROTOCOLS)
            .addHeader(RawHeader.create("Upgrade", "websocket"))
            .addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("Upgrade"))
            .addHeader(RawHeader.create("Sec-WebSocket-Accept", acceptKey(request)));
    if (wantsNull) {
      switching = switching.addHeader(SecWebSocketProtocol.create(NULL_PROTOCOL));
    }
    // on the node's own sockets the flow Pekko HTTP starts only marks the switch, and the socket
    // runs the connection's flow itself; on an HTTPS port Pekko HTTP runs it over its TLS stage
    Optional<ProtocolSwitch> socket = request.getAttribute(ProtocolSwitch.KEY);
    Flow<ByteString, ByteString, ?> protocol =
        socket.isPresent() ? socket.get().handOverAfterResponse(flow) : Flow.fromGraph(flow);
    @SuppressWarnings("unchecked")
    org.apache.pekko.stream.scaladsl.Flow<ByteString, ByteString, Object> scalaFlow =
        (org.apache.pekko.stream.scaladsl.Flow<ByteString, ByteString, Object>) (Object) protocol.asScala();
    return switching.addHeader(new UpgradeToOtherProtocolResponseHeader(scalaFlow));
  }

  /** The handshake's answer to the client's {@code Sec-WebSocket-Key} (RFC 6455 section 4.2.2). */
  private static String acceptKey(HttpRequest request) {
    String key = request.getHeader("Sec-WebSocket-Key").map(h -> h.value()).orElseThrow();
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-1").digest((key + ACCEPT_GUID).getBytes(StandardCharsets.US_ASCII));
      return Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK always has SHA-1", e);
    }
  }

  /** The first X-Forwarded-For entry, else the peer's address. */
  private static String remoteAddress(HttpRequest request) {
    Optional<String> forwarded =
        request.getHeader("X-Forwarded-For").map(h -> h.value().split(",")[0].trim()).filter(s -> !s.isEmpty());
    return forwarded.orElseGet(
        () ->
            request
                .getAttribute(AttributeKeys.remoteAddress)
                .flatMap(a -> a.getAddress())
                .map(a -> a.getHostAddress())
                .orElse("unknown"));
  }

  /** A node that has not read the deny list from a majority cannot tell a cancelled booking: 503. */
  private ApiException unread() {
    metrics.unreadRefusals.labelValues("relay").inc();
    return new ApiException(503, "this node has not read the deny list yet; retry");
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

  private HttpResponse refusal(Throwable failure) {
    HttpResponse json = AccessGuard.toResponse(failure, errors);
    Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof ApiException api) {
      HttpResponse response = text(api.status(), api.getMessage());
      return switch (api.status()) {
        case 503 -> response.addHeader(RawHeader.create("Retry-After", "1"));
        case 426 -> response.addHeader(RawHeader.create("Sec-WebSocket-Version", WEBSOCKET_VERSION));
        default -> response;
      };
    }
    return json.status().intValue() == 503
        ? text(503, "the relay did not answer in time").addHeader(RawHeader.create("Retry-After", "1"))
        : text(json.status().intValue(), "internal error");
  }

  static HttpResponse text(int status, String line) {
    return HttpResponse.create()
        .withStatus(StatusCodes.get(status))
        .withEntity(ContentTypes.TEXT_PLAIN_UTF8, line + "\n");
  }
}
