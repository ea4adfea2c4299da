package io.relay.status;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.relay.topic.ConnectionReport;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.util.ByteString;

/**
 * The practable-compatible {@code stats} topic's frames: the cluster's connection reports in
 * practable's camelCase shape (plus {@code node}), and the {@code {"cmd":"update"}} request.
 */
public final class StatsFrames {
  /** The topic whose participants receive the cluster's reports instead of each other's frames. */
  public static final String STATS_TOPIC = "stats";

  private static final ObjectMapper JSON = new ObjectMapper();
  /** practable's {@code last} of a direction without a message. */
  static final String NEVER = "Never";

  private StatsFrames() {}

  /** Renders the reports as one JSON array. */
  public static ByteString render(List<ConnectionReport> reports) {
    List<Map<String, Object>> out = new ArrayList<>();
    for (ConnectionReport r : reports) {
      Map<String, Object> report = new LinkedHashMap<>();
      report.put("topic", r.topic());
      report.put("canRead", r.canRead());
      report.put("canWrite", r.canWrite());
      report.put("connected", r.connectedAt());
      report.put("expiresAt", r.expiresAt());
      report.put("remoteAddr", r.remoteAddr());
      report.put("userAgent", r.userAgent());
      report.put("scopes", r.scopes());
      report.put("stats", Map.of("tx", direction(r.stats().tx()), "rx", direction(r.stats().rx())));
      report.put("node", r.node());
      out.add(report);
    }
    try {
      return ByteString.fromArrayUnsafe(JSON.writeValueAsBytes(out));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot render stats", e);
    }
  }

  /**
   * One direction as practable writes it: {@code last} a Go duration ({@code "2.5s"}), or {@code
   * "Never"} for a direction without a message, which practable's Go status client
   * (pkg/status) parses; a number there would fail its whole frame.
   */
  private static Map<String, Object> direction(ConnectionReport.Direction d) {
    return Map.of("last", d.fps() == 0 ? NEVER : goDuration(d.last()), "size", d.size(), "fps", d.fps());
  }

  /** Seconds as a Go duration string, to the millisecond. */
  static String goDuration(double seconds) {
    return BigDecimal.valueOf(seconds).setScale(3, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString() + "s";
  }

  /** Whether a message sent on the stats topic is {@code {"cmd":"update"}}. */
  public static boolean isUpdateRequest(ByteBuf payload) {
    if (payload.readableBytes() > 1024) {
      return false;
    }
    try {
      JsonNode command = JSON.readTree(ByteBufUtil.getBytes(payload));
      return command != null && command.isObject() && "update".equals(command.path("cmd").asText());
    } catch (IOException e) {
      return false;
    }
  }
}
