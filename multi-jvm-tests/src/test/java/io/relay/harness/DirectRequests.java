package io.relay.harness;

import io.relay.testing.Tokens;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

/**
 * Requests a test sends straight to one node at its own address, bypassing the proxy: code
 * requests and denies at its access port, upgrades at its relay port, each answer kept as a
 * status.
 */
final class DirectRequests {
  /** What an upgrade that got no HTTP answer at all counts as. */
  static final int NO_ANSWER = 0;
  private static final Duration ANSWER = Duration.ofSeconds(15);
  private static final Duration DENY_LIFETIME = Duration.ofMinutes(10);

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** {@code POST /session/{topic}} at {@code node} with {@code token}. */
  HttpResponse<String> session(NodeProcess node, String topic, String token) {
    return post(node, "/session/" + topic, token);
  }

  /** A code for {@code topic} issued by {@code node}; fails unless the node answers 200. */
  String code(NodeProcess node, String topic, String token) {
    HttpResponse<String> answer = session(node, topic, token);
    if (answer.statusCode() != 200) {
      throw new AssertionError(node.name + " answered a code request for " + topic + " with " + answer.statusCode() + ": " + answer.body());
    }
    return codeOf(answer);
  }

  /** The code in a 200 answer to a code request. */
  static String codeOf(HttpResponse<String> answer) {
    return answer.body().replaceAll(".*code=([A-Za-z0-9_-]+).*", "$1");
  }

  /** {@code POST /bids/deny} (or {@code allow}) of {@code booking} at {@code node}, for ten minutes. */
  HttpResponse<String> bids(NodeProcess node, String list, String booking) {
    long exp = Instant.now().plus(DENY_LIFETIME).getEpochSecond();
    return post(node, "/bids/" + list + "?bid=" + booking + "&exp=" + exp, Tokens.admin("relay:admin"));
  }

  /**
   * Upgrades at {@code node}'s relay port with {@code code}: 101 when admitted (the connection is
   * then dropped at once), else the status the node refused it with, or {@link #NO_ANSWER}.
   */
  CompletableFuture<Integer> upgrade(NodeProcess node, String topic, String code) {
    URI uri = URI.create("ws://" + node.host + ":" + node.relayPort + "/session/" + topic + "?code=" + code);
    return http.newWebSocketBuilder()
        .connectTimeout(ANSWER)
        .buildAsync(uri, new WebSocket.Listener() {})
        .handle(
            (socket, failure) -> {
              if (socket != null) {
                socket.abort();
                return 101;
              }
              Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
              return cause instanceof WebSocketHandshakeException refused ? refused.getResponse().statusCode() : NO_ANSWER;
            });
  }

  private HttpResponse<String> post(NodeProcess node, String path, String authorization) {
    try {
      return http.send(
          HttpRequest.newBuilder(URI.create("http://" + node.host + ":" + node.accessPort + path))
              .timeout(ANSWER)
              .header("Authorization", authorization)
              .POST(HttpRequest.BodyPublishers.noBody())
              .build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new AssertionError("POST " + path.replaceAll("\\?.*", "") + " to " + node.name + " failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
