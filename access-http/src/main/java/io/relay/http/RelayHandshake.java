package io.relay.http;

import io.relay.http.socket.PlainResponse;
import io.relay.http.socket.RequestHead;
import io.relay.http.socket.OwnRequests;
import io.relay.ws.Handshake;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * {@code GET /session/{topic}?code=C} on a plain relay port, answered from the node's own reading
 * of the request head ({@link RequestHead}): the opening handshake checked (RFC 6455 section
 * 4.2.1), the client admitted ({@link Admission}), and the {@code 101} written by the node, with
 * no HTTP stream per connection. Refusals are a plain status with a one-line body, and close the
 * connection: the port serves one request per connection. Other paths get 404, other methods 405.
 */
final class RelayHandshake implements OwnRequests {
  private static final String PREFIX = "/session";

  private final Admission admission;
  private final AdmissionGate gate;

  RelayHandshake(Admission admission, AdmissionGate gate) {
    this.admission = admission;
    this.gate = gate;
  }

  /** Every request on a relay port is this class's to answer. */
  @Override
  public boolean takes(RequestHead head) {
    return true;
  }

  /** A head the relay port cannot read is refused by the connection itself. */
  @Override
  public boolean handsOver() {
    return false;
  }

  @Override
  public CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer) {
    String path = head.path();
    if (!path.equals(PREFIX) && !path.startsWith(PREFIX + "/")) {
      return refuse(404, "The requested resource could not be found.", Map.of());
    }
    if (!head.method().equals("GET")) {
      return refuse(405, "HTTP method not allowed, supported methods: GET", Map.of("Allow", "GET"));
    }
    String topic;
    String code;
    String key = head.header("Sec-WebSocket-Key");
    try {
      topic = admission.topic(path.substring(PREFIX.length()));
      Handshake.Problem problem =
          Handshake.check(head.header("Upgrade"), head.header("Connection"), key, head.header("Sec-WebSocket-Version"));
      if (problem == Handshake.Problem.VERSION) {
        throw new ApiException(426, "unsupported WebSocket version; this server speaks " + Handshake.VERSION);
      }
      if (problem != null || !head.version().equals("HTTP/1.1") || head.count("Host") != 1) {
        throw new ApiException(400, "expected a WebSocket upgrade");
      }
      code = head.query("code");
    } catch (ApiException e) {
      return CompletableFuture.completedFuture(closing(admission.refusal(e)));
    } catch (RequestHead.Malformed e) {
      return refuse(e.status(), e.getMessage(), Map.of());
    }
    if (!gate.tryEnter()) {
      return refuse(
          503, "the node is admitting as many clients as it can; retry", Map.of("Retry-After", AdmissionGate.RETRY_AFTER_SECONDS));
    }
    String protocol = Handshake.requestsProtocol(head.header("Sec-WebSocket-Protocol"), Handshake.NULL_PROTOCOL) ? Handshake.NULL_PROTOCOL : null;
    String userAgent = head.header("User-Agent");
    return admission
        .admit(topic, code, userAgent == null ? "" : userAgent, remoteAddress(head, peer))
        .handle(
            (flow, failure) -> {
              gate.leave();
              return failure == null
                  ? Answer.switching(Handshake.switching(key, protocol), flow)
                  : closing(admission.refusal(failure));
            });
  }

  /** The first X-Forwarded-For entry, else the peer's address. */
  private static String remoteAddress(RequestHead head, InetSocketAddress peer) {
    String forwarded = head.header("X-Forwarded-For");
    String first = forwarded == null ? "" : forwarded.split(",")[0].trim();
    return !first.isEmpty() ? first : peer.getAddress() == null ? "unknown" : peer.getAddress().getHostAddress();
  }

  private static CompletionStage<Answer> refuse(int status, String line, Map<String, String> headers) {
    return CompletableFuture.completedFuture(Answer.closing(PlainResponse.render(status, line, headers)));
  }

  private static Answer closing(Admission.Refusal refusal) {
    return Answer.closing(PlainResponse.render(refusal.status(), refusal.line(), refusal.headers()));
  }
}
