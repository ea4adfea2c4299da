package io.relay.http;

/** A request refused with an HTTP status and a message the client can act on. */
final class ApiException extends RuntimeException {
  private final int status;

  ApiException(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  int status() {
    return status;
  }
}
