package io.relay.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.prometheus.metrics.core.metrics.Counter;
import io.relay.RelaySettings;
import io.relay.memory.MemoryBudget;
import io.relay.metrics.RelayMetrics;
import io.relay.testing.Await;
import io.relay.testing.TestClusterConfig;
import io.relay.topic.Connection;
import io.relay.topic.ConnectionReport;
import io.relay.topic.OutboundQueue;
import io.relay.topic.Room;
import io.relay.ws.WsFrames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The stats topic on its own, the cluster's status a probe: other topics relay; its readers get the
 * gathered reports on schedule and on {@code {"cmd":"update"}}; nothing sent on it is relayed; a
 * request while a gathering is under way is served by one more gathering after it.
 */
class StatsTopicTest {
  private static final ActorTestKit KIT = ActorTestKit.create("stats-topic", TestClusterConfig.with(Map.of("relay.stats-every", "1h")));
  private static final Duration WAIT = Duration.ofSeconds(5);

  private final TestProbe<ClusterStatus.Gather> clusterStatus = KIT.createTestProbe();
  private final RelayMetrics metrics = new RelayMetrics();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  private StatsTopic stats(String every) {
    RelaySettings settings =
        RelaySettings.create(ConfigFactory.parseMap(Map.of("relay.stats-every", every)).withFallback(KIT.system().settings().config()));
    return new StatsTopic(clusterStatus.ref(), settings, metrics, MemoryBudget.unlimited());
  }

  /** The room a topic actor of {@code topic} would get, asked for from inside an actor as a topic actor does. */
  private static Room room(StatsTopic stats, String topic) throws Exception {
    CompletableFuture<Room> room = new CompletableFuture<>();
    KIT.spawn(
        Behaviors.setup(
            context -> {
              room.complete(stats.roomFor(topic, context));
              return Behaviors.empty();
            }));
    return room.get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  private static Connection connection(long id, String... scopes) {
    return connection(id, 64, scopes);
  }

  private static Connection connection(long id, int queued, String... scopes) {
    Connection.Grant grant =
        new Connection.Grant("stats", "booking-" + id, List.of(scopes), Instant.now(), Instant.now().plusSeconds(3600), "127.0.0.1", "test");
    return new Connection(id, grant, new OutboundQueue(queued, 1 << 20, Counter.builder().name("discarded").build()));
  }

  private static WsFrames.Frame text(String text) {
    return WsFrames.frame(WsFrames.TEXT, ByteString.fromString(text));
  }

  /** Answers the next gathering with no reports: the readers get {@code []}. */
  private ClusterStatus.Gather answerNextGathering() {
    ClusterStatus.Gather gather = clusterStatus.expectMessageClass(ClusterStatus.Gather.class, WAIT);
    gather.replyTo().tell(new ClusterStatus.Gathered(List.of(), List.of(), List.of()));
    return gather;
  }

  private static WsFrames.Frame nextFrame(Connection reader) {
    return KIT.createTestProbe()
        .awaitAssert(
            WAIT,
            () -> {
              WsFrames.Frame frame = reader.outbound().poll();
              assertNotNull(frame, "no frame for the stats reader within " + WAIT);
              return frame;
            });
  }

  @Test
  void anOrdinaryTopicGetsNoSpecialRoom() throws Exception {
    assertNull(room(stats("1h"), "lab/a"), "an ordinary topic gets no special room");
  }

  @Test
  void readersReceiveTheClustersReportsOnSchedule() throws Exception {
    Room room = room(stats("200ms"), "stats");
    Connection reader = connection(1, "read");
    room.setReaders(new Connection[] {reader});
    answerNextGathering();
    assertEquals("[]", nextFrame(reader).payload().toString(StandardCharsets.UTF_8));
    answerNextGathering();
    assertNotNull(nextFrame(reader), "and again at the next interval");
  }

  @Test
  void anUpdateRequestIsAnsweredAtOnceNothingIsRelayedAndARequestDuringAGatheringGetsOneMore() throws Exception {
    Room room = room(stats("1h"), "stats");
    Connection writer = connection(2, "read", "write");
    Connection reader = connection(3, "read");
    room.setReaders(new Connection[] {writer, reader});

    room.fanOut(writer, text("hello"));
    clusterStatus.expectNoMessage(Duration.ofMillis(200));
    assertNull(reader.outbound().poll(), "a message on the stats topic is not relayed");

    room.fanOut(writer, text("{\"cmd\":\"update\"}"));
    ClusterStatus.Gather first = clusterStatus.expectMessageClass(ClusterStatus.Gather.class, WAIT);
    room.fanOut(writer, text("{\"cmd\":\"update\"}"));
    room.fanOut(reader, text("{\"cmd\":\"update\"}"));
    clusterStatus.expectNoMessage(Duration.ofMillis(200));
    first.replyTo().tell(new ClusterStatus.Gathered(List.of(), List.of(), List.of()));
    assertEquals("[]", nextFrame(reader).payload().toString(StandardCharsets.UTF_8));
    assertEquals("[]", nextFrame(writer).payload().toString(StandardCharsets.UTF_8), "the writer reads too");

    answerNextGathering();
    assertNotNull(nextFrame(reader), "the requests made during the first gathering are served by one more");
    clusterStatus.expectNoMessage(Duration.ofMillis(200));
  }

  @Test
  void aReportAReaderHasNoRoomForDropsItsOldestAndIsCountedAsDropped() throws Exception {
    Room room = room(stats("200ms"), "stats");
    Connection slow = connection(4, 1, "read");
    room.setReaders(new Connection[] {slow});
    answerNextGathering(); // a report of no connections
    ConnectionReport.Direction none = new ConnectionReport.Direction(0, 0, 0);
    ConnectionReport newest =
        new ConnectionReport("newest-topic", "pekko://relay@127.0.0.1:25520", "b1", true, false, "2026-12-07T00:00:00Z",
            "2026-12-07T01:00:00Z", "10.0.0.1", "test", List.of("read"), new ConnectionReport.Stats(none, none, 0));
    clusterStatus.expectMessageClass(ClusterStatus.Gather.class, WAIT).replyTo().tell(new ClusterStatus.Gathered(List.of(newest), List.of(), List.of()));
    Await.until("the older report is dropped and counted", WAIT, () -> metrics.framesDropped.get() == 1.0);
    WsFrames.Frame kept = slow.outbound().poll();
    assertNotNull(kept, "a report is kept");
    assertTrue(kept.payload().toString(StandardCharsets.UTF_8).contains("newest-topic"), "the newest report is kept: " + kept.payload().toString(StandardCharsets.UTF_8));
    kept.release();
  }
}
