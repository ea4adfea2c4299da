package io.relay.http;

/** A request refused with an HTTP status and a message the client can act on. */
final class ApiException extends RuntimeException {
  private final int status;
  private final long retryAfterSeconds;

  ApiException(int status, String message) {
    this(status, message, 0);
  }

  /** @param retryAfterSeconds what a 503's {@code Retry-After} says, or 0 for the default */
  ApiException(int status, String message, long retryAfterSeconds) {
    super(message, null, false, false);
    this.status = status;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  int status() {
    return status;
  }

  /** What a 503's {@code Retry-After} says, in seconds, or 0 for the default. */
  long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
