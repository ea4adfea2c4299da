package io.relay.node;

import io.relay.client.WholeMessages;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A WebSocket participant built on the JDK's standard client: records frames and the close code. */
final class Participant extends WholeMessages implements AutoCloseable {
  /** One received message. */
  record Frame(boolean text, byte[] data) {
    String asText() {
      return new String(data, StandardCharsets.UTF_8);
    }
  }

  /** The server refused the upgrade with this HTTP status. */
  static final class Refused extends RuntimeException {
    final int status;

    Refused(int status) {
      super("upgrade refused with " + status);
      this.status = status;
    }
  }

  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
  final CompletableFuture<Integer> closeCode = new CompletableFuture<>();
  final CompletableFuture<Void> pinged = new CompletableFuture<>();
  private final boolean reading;
  private WebSocket socket;

  private Participant(boolean reading) {
    this.reading = reading;
  }

  /** Connects to a relay URI; throws {@link Refused} when the server answers without upgrading. */
  static Participant connect(String uri) {
    return connect(uri, true);
  }

  /** Connects; a participant that is not {@code reading} never asks for a frame (a stalled reader). */
  static Participant connect(String uri, boolean reading) {
    return connect(CLIENT, uri, reading);
  }

  /** Connects through a given HTTP client (for example one that trusts a test certificate). */
  static Participant connect(HttpClient client, String uri, boolean reading) {
    Participant participant = new Participant(reading);
    try {
      participant.socket =
          client
              .newWebSocketBuilder()
              .connectTimeout(Duration.ofSeconds(10))
              .buildAsync(URI.create(uri), participant)
              .get(15, TimeUnit.SECONDS);
      return participant;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException refused) {
        throw new Refused(refused.getResponse().statusCode());
      }
      throw new AssertionError("could not connect to the relay", e.getCause());
    } catch (InterruptedException | TimeoutException e) {
      throw new AssertionError("connecting to the relay did not finish in time", e);
    }
  }

  @Override
  public void onOpen(WebSocket webSocket) {
    if (reading) {
      webSocket.request(1);
    }
  }

  @Override
  protected void onMessage(boolean text, byte[] data) {
    frames.add(new Frame(text, data));
  }

  @Override
  public CompletionStage<?> onPing(WebSocket webSocket, ByteBuffer message) {
    pinged.complete(null);
    webSocket.request(1);
    return super.onPing(webSocket, message);
  }

  @Override
  public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
    closeCode.complete(statusCode);
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    closeCode.completeExceptionally(error);
  }

  /** A participant connected as not reading starts reading. */
  void resume() {
    socket.request(1);
  }

  void sendText(String text) {
    await(socket.sendText(text, true), "sending a text frame");
  }

  void sendBinary(byte[] data) {
    await(socket.sendBinary(ByteBuffer.wrap(data), true), "sending a binary frame");
  }

  /** Sends {@code data} as one message in frames of {@code fragment} bytes (the last may be shorter). */
  void sendBinaryInFragments(byte[] data, int fragment) {
    for (int at = 0; at < data.length; at += fragment) {
      int end = Math.min(data.length, at + fragment);
      await(socket.sendBinary(ByteBuffer.wrap(data, at, end - at), end == data.length), "sending a binary fragment");
    }
  }

  /** The next received frame, failing if none arrives in time. */
  Frame next(Duration timeout) {
    try {
      Frame frame = frames.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (frame == null) {
        throw new AssertionError("no frame arrived within " + timeout);
      }
      return frame;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  Frame next() {
    return next(Duration.ofSeconds(5));
  }

  /** The close code the server sent, failing if the connection is not closed in time. */
  int awaitClose(Duration timeout) {
    try {
      return closeCode.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AssertionError("the server did not close the connection within " + timeout);
    } catch (ExecutionException e) {
      throw new AssertionError("the connection failed instead of closing", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  boolean isClosed() {
    return closeCode.isDone();
  }

  @Override
  public void close() {
    if (!socket.isOutputClosed()) {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
    }
    socket.abort();
  }

  private static void await(CompletableFuture<?> future, String what) {
    try {
      future.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | CompletionException e) {
      throw new AssertionError(what + " failed", e.getCause());
    } catch (TimeoutException e) {
      throw new AssertionError(what + " did not finish within 10s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
