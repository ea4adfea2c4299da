package io.relay.http;

import io.relay.metrics.RelayMetrics;

/** A request refused with an HTTP status and a message the client can act on. */
final class ApiException extends RuntimeException {
  private final int status;
  private final long retryAfterSeconds;

  ApiException(int status, String message) {
    this(status, message, 0);
  }

  ApiException(int status, String message, long retryAfterSeconds) {
    super(message, null, false, false);
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /**
   * A node that has not read the deny list from a majority cannot tell a cancelled booking: 503,
   * counted by the API that refused ({@code api}).
   */
  static ApiException denyListUnread(RelayMetrics metrics, String api) {
    metrics.unreadRefusals.labelValues(api).inc();
    return new ApiException(503, "this node has not read the deny list from a majority of nodes yet; try again");
  }

  int status() {
    return status;
  }

  /** What a 503's {@code Retry-After} says, in seconds, or 0 for the default. */
  long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
