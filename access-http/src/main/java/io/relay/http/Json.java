package io.relay.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.util.Map;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * JSON bodies of the access API: snake_case, errors as {@code {"code": N, "message": "..."}}; a 503
 * always carries {@code Retry-After}.
 */
final class Json {
  static final ObjectMapper SNAKE_CASE =
      new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);

  private Json() {}

  static HttpResponse ok(Object body) {
    return response(200, body);
  }

  /** Seconds a client should wait before retrying a 503. */
  static final int RETRY_AFTER_SECONDS = 1;

  static HttpResponse error(int status, String message) {
    HttpResponse response = response(status, Map.of("code", status, "message", message));
    return status == 503 ? response.addHeader(RawHeader.create("Retry-After", String.valueOf(RETRY_AFTER_SECONDS))) : response;
  }

  static HttpResponse response(int status, Object body) {
    try {
      return HttpResponse.create().withStatus(StatusCodes.get(status)).withEntity(ContentTypes.APPLICATION_JSON, SNAKE_CASE.writeValueAsBytes(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render " + body.getClass().getSimpleName(), e);
    }
  }
}
