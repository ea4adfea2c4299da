package io.relay.ws;

/**
 * The server's side of the closing handshake (RFC 6455 sections 5.5.1, 7.1.1-7.1.7): what to
 * answer a peer's close, and when the TCP connection may end.
 *
 * <ul>
 *   <li>The peer closes first: the server answers with a close echoing its code (1000 when it
 *       carried none) and ends its side of the TCP connection once that answer is written.
 *   <li>The server fails the connection (a protocol error, invalid UTF-8, a message too big): it
 *       sends its close and ends its side of the TCP connection once it is written, without
 *       waiting for the peer's answer; what the peer sends then is not read as frames.
 *   <li>The server closes for its own reasons (a move, a drain, a deny, an expiry): it sends its
 *       close and waits for the peer's, then ends the TCP connection; a peer that never answers is
 *       cut off after the close timeout.
 * </ul>
 */
public final class CloseHandshake {
  private enum State {
    OPEN,
    /** The server sent its close and waits for the peer's. */
    CLOSE_SENT,
    /** The server's last frame is on its way; the connection ends once it is written. */
    ENDING
  }

  private State state = State.OPEN;

  /**
   * The peer sent a valid close frame.
   *
   * @return the close frame to answer with, or null when the server has already sent its own
   *     (the handshake is complete: end the connection now)
   */
  public WsFrames.Frame onPeerClose(CloseFrame close) {
    boolean answer = state == State.OPEN;
    state = State.ENDING;
    int echo = close.code() == CloseFrame.NO_CODE ? CloseCodes.NORMAL : close.code();
    return answer ? WsFrames.close(echo, "") : null;
  }

  /**
   * The server fails the connection.
   *
   * @return true if its close is still to be sent (then the connection ends once it is written);
   *     false when a close was already sent, so the connection ends now
   */
  public boolean onFailure() {
    boolean send = state == State.OPEN;
    state = State.ENDING;
    return send;
  }

  /**
   * The server's close frame was handed to the channel.
   *
   * @return true if the connection ends once it is written, false if it waits for the peer's
   *     close
   */
  public boolean onServerCloseSent() {
    if (state == State.OPEN) {
      state = State.CLOSE_SENT;
      return false;
    }
    return true;
  }

  /** Whether the server's close is on the wire and it waits for the peer's (or the close timeout). */
  public boolean awaitsPeerClose() {
    return state == State.CLOSE_SENT;
  }

  /** Whether the server sent or is sending its last frame: data frames no longer go out. */
  public boolean isClosing() {
    return state != State.OPEN;
  }
}
