package io.relay.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import java.util.Map;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;

/** JSON bodies of the access API: snake_case, errors as {@code {"code": N, "message": "..."}}. */
final class Json {
  static final ObjectMapper SNAKE_CASE =
      new ObjectMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);

  private Json() {}

  static HttpResponse ok(Object body) {
    return response(200, body);
  }

  static HttpResponse error(int status, String message) {
    return response(status, Map.of("code", status, "message", message));
  }

  static HttpResponse response(int status, Object body) {
    try {
      return HttpResponse.create()
          .withStatus(StatusCodes.get(status))
          .withEntity(ContentTypes.APPLICATION_JSON, SNAKE_CASE.writeValueAsBytes(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render " + body.getClass().getSimpleName(), e);
    }
  }
}
