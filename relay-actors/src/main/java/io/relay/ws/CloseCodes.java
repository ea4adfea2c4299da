package io.relay.ws;

/** The WebSocket close codes this relay sends (DESIGN section 4). */
public final class CloseCodes {
  /** Peer or server closing normally. */
  public static final int NORMAL = 1000;
  /** The node is draining: reconnect with a new code. */
  public static final int GOING_AWAY = 1001;
  /** The peer broke the WebSocket protocol. */
  public static final int PROTOCOL_ERROR = 1002;
  /** A message was larger than relay.max-message-bytes. */
  public static final int TOO_BIG = 1009;
  /** The server failed unexpectedly. */
  public static final int INTERNAL_ERROR = 1011;
  /** The token behind the code expired. */
  public static final int TOKEN_EXPIRED = 4000;
  /** The topic moved to another node: reconnect at once with a new code. */
  public static final int TOPIC_MOVED = 4001;
  /** The booking was denied (cancelled): stop. */
  public static final int BOOKING_DENIED = 4003;

  private CloseCodes() {}
}
