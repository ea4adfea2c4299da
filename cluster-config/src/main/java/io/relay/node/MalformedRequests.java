package io.relay.node;

import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * Answers a request that Pekko HTTP could not parse (an illegal character in its request line or
 * a header, a header or target over the limits) with its status and reason only, and logs that it
 * did with the status alone: the parser's own account of the error quotes the request target or
 * the header value, which may hold a one-time code or a token. Configured as {@code
 * pekko.http.server.parsing.error-handler}, for the management port, the one port Pekko HTTP's
 * server serves.
 */
public final class MalformedRequests extends ParsingErrorHandler {
  @Override
  public HttpResponse handle(StatusCode status, ErrorInfo error, LoggingAdapter log, ServerSettings settings) {
    log.warning("refused a request that could not be parsed: {}", status.value());
    return HttpResponse.create()
        .withStatus(status.intValue())
        .withEntity(ContentTypes.TEXT_PLAIN_UTF8, status.reason() + "\n");
  }
}
