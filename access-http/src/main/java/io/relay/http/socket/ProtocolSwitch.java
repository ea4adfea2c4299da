package io.relay.http.socket;

import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.util.ByteString;

/**
 * How a route takes a plain-HTTP connection of a {@link SocketServer} over from HTTP, as a
 * WebSocket upgrade does: every request on such a connection carries it as the attribute {@link
 * #KEY}.
 */
public interface ProtocolSwitch {
  AttributeKey<ProtocolSwitch> KEY = AttributeKey.create("relay-protocol-switch", ProtocolSwitch.class);

  /**
   * Runs {@code flow} over the connection's bytes, in place of HTTP, right after the {@code 101
   * Switching Protocols} response that the route answers now has been written. Pekko HTTP's own
   * server graph of the connection then ends: nothing of it stays in memory or on the path of
   * the connection's bytes.
   */
  void afterSwitchingResponse(Graph<FlowShape<ByteString, ByteString>, ?> flow);
}
