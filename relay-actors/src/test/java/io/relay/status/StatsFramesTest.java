package io.relay.status;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.relay.topic.ConnectionReport;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The stats topic's frames read as practable's: {@code last} is a Go duration string, or {@code
 * "Never"}, which practable's Go status client parses (a number there fails its whole frame).
 */
class StatsFramesTest {
  @Test
  void lastIsAGoDurationOrNever() throws Exception {
    ConnectionReport report =
        new ConnectionReport(
            "123",
            "pekko://relay@127.0.0.1:25520",
            "b1",
            true,
            true,
            "2023-03-10T14:04:45Z",
            "2023-03-10T15:04:45Z",
            "10.0.0.1",
            "Go-http-client/1.1",
            List.of("read", "write"),
            new ConnectionReport.Stats(
                new ConnectionReport.Direction(2.9037, 5, 20.17), new ConnectionReport.Direction(12, 0, 0), 0));
    JsonNode stats = new ObjectMapper().readTree(StatsFrames.render(List.of(report)).toArray()).get(0).get("stats");
    assertEquals("2.904s", stats.get("tx").get("last").asText());
    assertEquals(20.17, stats.get("tx").get("fps").asDouble());
    assertEquals("Never", stats.get("rx").get("last").asText(), "a direction without a message");
    assertEquals("0s", StatsFrames.goDuration(0));
    assertEquals("90s", StatsFrames.goDuration(90));
  }
}
