package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relay.testing.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Past its bound the gate refuses at once with 503 and Retry-After, and admits again once there is room. */
class AdmissionGateTest extends AllDirectives {
  private final ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "gate-test");
  private final HttpClient client = HttpClient.newHttpClient();

  @AfterEach
  void stop() {
    system.terminate();
  }

  @Test
  void pastItsBoundARequestIsRefusedAtOnceAndAdmittedAgainOnceThereIsRoom() throws Exception {
    AtomicInteger refused = new AtomicInteger();
    AdmissionGate gate = new AdmissionGate(1, refused::incrementAndGet);
    CompletableFuture<String> slow = new CompletableFuture<>();
    Route route =
        gate.admit(
            Json.error(503, "busy"),
            () -> path("slow", () -> completeWithFuture(slow.thenApply(body -> org.apache.pekko.http.javadsl.model.HttpResponse.create().withEntity(body))))
                .orElse(path("quick", () -> complete("quick"))));
    ServerBinding binding = Http.get(system).newServerAt("127.0.0.1", 0).bind(route).toCompletableFuture().get(10, TimeUnit.SECONDS);
    String base = "http://127.0.0.1:" + binding.localAddress().getPort();

    CompletableFuture<HttpResponse<String>> first = client.sendAsync(get(base + "/slow"), HttpResponse.BodyHandlers.ofString());
    Await.until("the first request is being worked on", Duration.ofSeconds(10), () -> gate.inFlight() == 1);

    HttpResponse<String> second = client.send(get(base + "/quick"), HttpResponse.BodyHandlers.ofString());
    assertEquals(503, second.statusCode(), "no room for a second admission");
    assertEquals(List.of("1"), second.headers().allValues("Retry-After"), "the client is told once when to retry");
    assertEquals(1, refused.get(), "the refusal is counted");

    slow.complete("slow");
    assertEquals(200, Await.value("the admitted request finishes", Duration.ofSeconds(10), first).statusCode());
    Await.until("the slot is given back", Duration.ofSeconds(10), () -> gate.inFlight() == 0);
    assertEquals(200, client.send(get(base + "/quick"), HttpResponse.BodyHandlers.ofString()).statusCode(), "room again");
    assertEquals(404, client.send(get(base + "/nowhere"), HttpResponse.BodyHandlers.ofString()).statusCode(), "a rejection gives the slot back too");
    assertEquals(0, gate.inFlight());
  }

  private static HttpRequest get(String uri) {
    return HttpRequest.newBuilder(URI.create(uri)).timeout(Duration.ofSeconds(10)).build();
  }
}
