package io.relay.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/** Calls a node's access API the way practable clients do: the token raw in Authorization. */
final class AccessClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http;
  private final TestNode node;

  AccessClient(TestNode node) {
    this(node, HttpClient.newHttpClient());
  }

  /** A client whose calls go through {@code http} (one that trusts a node's TLS certificate). */
  AccessClient(TestNode node, HttpClient http) {
    this.node = node;
    this.http = http;
  }

  /** A JSON answer. */
  record Answer(int status, JsonNode body, java.net.http.HttpHeaders headers) {}

  Answer post(String path, String authorization) {
    return send(HttpRequest.newBuilder(node.access(path)).POST(HttpRequest.BodyPublishers.noBody()), authorization);
  }

  Answer get(String path, String authorization) {
    return send(HttpRequest.newBuilder(node.access(path)).GET(), authorization);
  }

  /** A request with any method and headers (Origin, a preflight's Access-Control-Request-*). */
  Answer request(String method, String path, Map<String, String> headers) {
    HttpRequest.Builder request = HttpRequest.newBuilder(node.access(path)).method(method, HttpRequest.BodyPublishers.noBody());
    headers.forEach(request::header);
    return send(request, null);
  }

  /** Exchanges a session token for a one-time relay URI, failing unless it is granted. */
  String relayUri(String topic, String token) {
    Answer answer = post("/session/" + topic, token);
    if (answer.status() != 200) {
      throw new AssertionError("no relay URI for " + topic + ": " + answer);
    }
    return answer.body().get("uri").asText();
  }

  private Answer send(HttpRequest.Builder request, String authorization) {
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    try {
      HttpResponse<String> response =
          http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
      String body = response.body();
      return new Answer(response.statusCode(), body.isEmpty() ? null : JSON.readTree(body), response.headers());
    } catch (IOException e) {
      throw new AssertionError("access API call failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
