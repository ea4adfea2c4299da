package io.relay.http.socket;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Graph;
import org.apache.pekko.util.ByteString;

/**
 * What a port that serves only protocol upgrades ({@link SocketServer#bindUpgrades}) answers to
 * the one request head each of its connections sends: the bytes of a response, and the protocol
 * that serves the connection after them, or none (the connection closes once the response is
 * written).
 */
public interface Upgrades {
  /**
   * The answer to {@code head}, received from {@code peer}. A failed stage is answered with 500
   * and the connection closed.
   */
  CompletionStage<Answer> answer(RequestHead head, InetSocketAddress peer);

  /**
   * A response and what comes after it.
   *
   * @param response the whole response, head and body
   * @param protocol the flow that serves the connection's bytes after the response, or null to
   *     close the connection once the response is written
   */
  record Answer(byte[] response, Graph<FlowShape<ByteString, ByteString>, ?> protocol) {
    /** A response after which the connection closes. */
    public static Answer closing(byte[] response) {
      return new Answer(response, null);
    }
  }
}
