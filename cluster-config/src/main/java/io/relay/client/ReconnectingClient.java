package io.relay.client;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A relay participant that behaves like the real clients: it POSTs its token for a one-time code,
 * connects, and whenever the connection closes fetches a new code and reconnects when
 * {@link ReconnectPolicy} says (at once after 4001, never after 4003, otherwise after a jittered
 * backoff on top of any {@code Retry-After}). It stops for good on 4003 or when closed.
 */
public final class ReconnectingClient implements AutoCloseable {
  /** What the client reports; called on the HTTP client's threads, one event at a time. */
  public interface Listener {
    default void onOpen(int attempt) {}

    void onMessage(boolean text, byte[] data);

    default void onClose(int code, String reason) {}

    /** A connection attempt failed; {@code status} is the HTTP status, or 0 for no answer. */
    default void onRefused(int status, String detail) {}
  }

  /**
   * @param access the access API's base URL, for example http://127.0.0.1:3000
   * @param minBackoff the first backoff cap; each failure doubles it up to {@code maxBackoff}
   * @param relayBase connect here (scheme, host, port) instead of where the returned URI points,
   *     for a client that reaches the relay through a different ingress; null to follow the URI
   */
  public record Options(
      URI access, String topic, String token, Duration minBackoff, Duration maxBackoff, URI relayBase) {}

  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final ScheduledExecutorService scheduler;
  private final Options options;
  private final ReconnectPolicy policy;
  private final Listener listener;
  private volatile WebSocket socket;
  private volatile boolean stopped;
  private int attempts;

  public ReconnectingClient(HttpClient http, ScheduledExecutorService scheduler, Options options, Listener listener) {
    this.http = http;
    this.scheduler = scheduler;
    this.options = options;
    this.policy = new ReconnectPolicy(options.minBackoff(), options.maxBackoff());
    this.listener = listener;
  }

  /** Starts connecting in the background. */
  public void start() {
    connect();
  }

  /** Whether a connection is open now. */
  public boolean isConnected() {
    WebSocket current = socket;
    return current != null && !current.isOutputClosed() && !current.isInputClosed();
  }

  /** Whether the client gave up for good (4003) or was closed. */
  public boolean isStopped() {
    return stopped;
  }

  /** Sends a text frame if connected; returns whether it was handed to the connection. */
  public boolean sendText(String text) {
    WebSocket current = socket;
    if (current == null || current.isOutputClosed()) {
      return false;
    }
    return sendAndWait(current.sendText(text, true));
  }

  /** Sends a binary frame if connected; returns whether it was handed to the connection. */
  public boolean sendBinary(byte[] data) {
    WebSocket current = socket;
    if (current == null || current.isOutputClosed()) {
      return false;
    }
    return sendAndWait(current.sendBinary(ByteBuffer.wrap(data), true));
  }

  private static boolean sendAndWait(CompletableFuture<WebSocket> send) {
    try {
      send.get(10, TimeUnit.SECONDS);
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  private void connect() {
    if (stopped) {
      return;
    }
    int attempt = ++attempts;
    fetchUri()
        .thenCompose(uri -> http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10)).buildAsync(target(uri), new Handler(attempt)))
        .whenComplete(
            (ws, failure) -> {
              if (failure == null) {
                return;
              }
              Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
              int status = 0;
              Duration retryAfter = Duration.ZERO;
              if (cause instanceof WebSocketHandshakeException refused) {
                status = refused.getResponse().statusCode();
                retryAfter = ReconnectPolicy.retryAfter(refused.getResponse().headers().firstValue("Retry-After").orElse(null));
              } else if (cause instanceof RefusedException refused) {
                status = refused.status;
                retryAfter = refused.retryAfter;
              }
              listener.onRefused(status, cause.getMessage());
              retryLater(retryAfter);
            });
  }

  private URI target(String uri) {
    URI given = URI.create(uri);
    if (options.relayBase() == null) {
      return given;
    }
    URI base = options.relayBase();
    return URI.create(base.getScheme() + "://" + base.getRawAuthority() + given.getRawPath() + "?" + given.getRawQuery());
  }

  private CompletableFuture<String> fetchUri() {
    HttpRequest request =
        HttpRequest.newBuilder(options.access().resolve("/session/" + options.topic()))
            .header("Authorization", options.token())
            .timeout(Duration.ofSeconds(10))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
        .thenApply(
            response -> {
              if (response.statusCode() != 200) {
                throw new RefusedException(
                    response.statusCode(), response.body(), ReconnectPolicy.retryAfter(response.headers().firstValue("Retry-After").orElse(null)));
              }
              try {
                return JSON.readTree(response.body()).get("uri").asText();
              } catch (IOException e) {
                throw new RefusedException(response.statusCode(), "unreadable access answer", Duration.ZERO);
              }
            });
  }

  private void retryLater(Duration serverAsked) {
    if (stopped) {
      return;
    }
    scheduler.schedule(this::connect, policy.delayMillis(serverAsked), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    stopped = true;
    WebSocket current = socket;
    if (current != null) {
      current.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
      current.abort();
    }
  }

  private static final class RefusedException extends RuntimeException {
    final int status;
    final Duration retryAfter;

    RefusedException(int status, String body, Duration retryAfter) {
      super("access API answered " + status + ": " + body);
      this.status = status;
      this.retryAfter = retryAfter;
    }
  }

  private final class Handler extends WholeMessages {
    private final int attempt;
    private boolean ended;

    Handler(int attempt) {
      this.attempt = attempt;
    }

    @Override
    public void onOpen(WebSocket webSocket) {
      socket = webSocket;
      policy.connected();
      listener.onOpen(attempt);
      webSocket.request(1);
    }

    @Override
    protected void onMessage(boolean text, byte[] data) {
      listener.onMessage(text, data);
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      ended(statusCode, reason);
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      ended(1006, String.valueOf(error.getMessage()));
    }

    private void ended(int code, String reason) {
      if (ended) {
        return;
      }
      ended = true;
      socket = null;
      dropPartial();
      listener.onClose(code, reason);
      switch (ReconnectPolicy.afterClose(code)) {
        case STOP -> stopped = true;
        case NOW -> scheduler.execute(ReconnectingClient.this::connect);
        case LATER -> retryLater(Duration.ZERO);
      }
    }
  }
}
