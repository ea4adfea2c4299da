package io.relay.ws;

/** The WebSocket close codes this relay sends (the relay section of the README lists them). */
public final class CloseCodes {
  /** Peer or server closing normally. */
  public static final int NORMAL = 1000;
  /** The node is draining: reconnect with a new code. */
  public static final int GOING_AWAY = 1001;
  /** The peer broke the WebSocket protocol. */
  public static final int PROTOCOL_ERROR = 1002;
  /** A text message that is not valid UTF-8 (RFC 6455 section 8.1). */
  public static final int INVALID_PAYLOAD = 1007;
  /** A message was larger than relay.max-message-bytes. */
  public static final int TOO_BIG = 1009;
  /**
   * The topic actor hosting the connection failed (a fault in the node, logged at ERROR): reconnect
   * with a new code, with backoff; a new topic actor serves the topic.
   */
  public static final int INTERNAL_ERROR = 1011;
  /** The node shed the connection to stay within its memory budget: reconnect with backoff. */
  public static final int TRY_AGAIN_LATER = 1013;
  /** The token behind the code expired. */
  public static final int TOKEN_EXPIRED = 4000;
  /** The topic moved to another node: reconnect at once with a new code. */
  public static final int TOPIC_MOVED = 4001;
  /** The booking was denied (cancelled): stop. */
  public static final int BOOKING_DENIED = 4003;

  private CloseCodes() {}
}
