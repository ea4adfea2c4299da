package io.relay.http;

import io.relay.metrics.RelayMetrics;
import java.util.regex.Pattern;

/** Validates topic names: {@code [A-Za-z0-9._~-]} segments joined by '/', at most 256 characters. */
final class TopicPath {
  static final int MAX_LENGTH = 256;
  private static final Pattern SEGMENTS = Pattern.compile("[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*");

  private TopicPath() {}

  /**
   * The topic named by the rest of a {@code /session/...} path; one over the length limit is
   * counted in {@code metrics}.
   *
   * @throws ApiException 400 when it is not a valid topic
   */
  static String parse(String unmatchedPath, RelayMetrics metrics) {
    String topic = unmatchedPath.startsWith("/") ? unmatchedPath.substring(1) : unmatchedPath;
    if (topic.isEmpty()) {
      throw new ApiException(400, "path must be /session/{topic}");
    }
    if (topic.length() > MAX_LENGTH) {
      metrics.limitRefusals.labelValues("topic_length").inc();
    }
    if (topic.length() > MAX_LENGTH || !SEGMENTS.matcher(topic).matches()) {
      throw new ApiException(400, "topic must be [A-Za-z0-9._~-] segments joined by '/', at most 256 characters");
    }
    for (String segment : topic.split("/")) {
      if (segment.equals(".") || segment.equals("..")) {
        throw new ApiException(400, "topic segments '.' and '..' are not allowed");
      }
    }
    return topic;
  }
}
