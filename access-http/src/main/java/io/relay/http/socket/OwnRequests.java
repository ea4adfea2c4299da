package io.relay.http.socket;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.util.ByteString;

/**
 * The requests a port answers from the node's own reading of their heads ({@link RequestConnection}),
 * with no HTTP stream: on the relay port every request (the WebSocket upgrades, and the refusals
 * of anything else), on the access port the code requests. What it does not take, and on a port
 * that {@link #handsOver}, a head it cannot read, is served by Pekko HTTP's server layer from that
 * request on.
 */
public interface OwnRequests {
  /** Whether the port answers {@code head} itself; false hands the connection to Pekko HTTP. */
  boolean takes(RequestHead head);

  /**
   * Whether requests not taken and heads that cannot be read go to the port's Pekko HTTP route;
   * false: the connection refuses a head it cannot read itself (400, 414, 431, 505) and closes.
   */
  default boolean handsOver() {
    return true;
  }

  /**
   * The answer to {@code head}, received from {@code peer}. A failed stage is answered with 500
   * and the connection closed.
   */
  CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer);

  /**
   * A response and what comes after it.
   *
   * @param response the whole response, head and body
   * @param protocol the flow that serves the connection's bytes after the response, or null
   * @param keepAlive without a protocol: whether the connection reads the next request after the
   *     response (the response must not say {@code Connection: close} then), or closes once it is
   *     written
   */
  record Answer(byte[] response, Graph<FlowShape<ByteString, ByteString>, ?> protocol, boolean keepAlive) {
    /** A response after which the connection closes. */
    public static Answer closing(byte[] response) {
      return new Answer(response, null, false);
    }

    /** A response after which {@code protocol} serves the connection. */
    public static Answer switching(byte[] response, Graph<FlowShape<ByteString, ByteString>, ?> protocol) {
      return new Answer(response, protocol, false);
    }

    /** A response after which the connection reads the next request. */
    public static Answer keepingAlive(byte[] response) {
      return new Answer(response, null, true);
    }
  }
}
