package io.relay.http.socket;

import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * How a route takes a plain-HTTP connection of a {@link SocketServer} over from HTTP, as a
 * WebSocket upgrade does: every request on such a connection carries it as the attribute {@link
 * #KEY}.
 */
public interface ProtocolSwitch {
  AttributeKey<ProtocolSwitch> KEY = AttributeKey.create("relay-protocol-switch", ProtocolSwitch.class);

  /**
   * The flow to give Pekko HTTP as the protocol after the route's {@code 101 Switching Protocols}
   * response (in its {@code UpgradeToOtherProtocolResponseHeader}). It only marks the switch:
   * Pekko HTTP starts it right before it hands the response's bytes on, and the socket then
   * serves {@code flow} over the connection's bytes, in place of HTTP, from the first byte after
   * the request's head. Pekko HTTP's own server graph of the connection then ends: nothing of it
   * stays in memory or on the path of the connection's bytes.
   */
  Flow<ByteString, ByteString, NotUsed> handOverAfterResponse(Graph<FlowShape<ByteString, ByteString>, ?> flow);
}
