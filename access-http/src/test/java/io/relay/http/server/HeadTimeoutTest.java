package io.relay.http.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** A request head's clock: it runs while the node reads the head, and a head not whole in time resets its connection. */
class HeadTimeoutTest {
  private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final PortCounters counters = new PortCounters();

  /** A kept connection whose last request came whole, now reading the first bytes of the next head. */
  private EmbeddedChannel connectionWithANextHeadBegun() {
    EmbeddedChannel channel = new EmbeddedChannel();
    channel.freezeTime(); // the channel's clock moves only as the test says
    channel.pipeline().addLast(HeadTimeout.NAME, new HeadTimeout(TIMEOUT_NANOS, counters));
    HeadTimeout.headRead(channel.pipeline());
    channel.writeInbound(Unpooled.copiedBuffer("GET /status HTTP/1.1\r\nHo", StandardCharsets.US_ASCII));
    channel.releaseInbound();
    return channel;
  }

  private static void pass(EmbeddedChannel channel, long nanos) {
    channel.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
    channel.runScheduledPendingTasks();
  }

  @Test
  void aHeadNotWholeWithinTheTimeoutResetsItsConnectionCounted() {
    EmbeddedChannel channel = connectionWithANextHeadBegun();
    pass(channel, TIMEOUT_NANOS - 1);
    assertTrue(channel.isActive(), "the client has the header timeout to finish its head ");
    pass(channel, 1);
    assertFalse(channel.isActive(), "reset at the header timeout");
    assertEquals(1, counters.headerTimeouts.sum());
  }

  @Test
  void aHeadsClockDoesNotRunOutWhileTheNodeIsNotReadingIt() {
    EmbeddedChannel channel = connectionWithANextHeadBegun();
    channel.config().setAutoRead(false); // the node answers the request before it, which its client takes slowly
    pass(channel, 3 * TIMEOUT_NANOS);
    assertTrue(channel.isActive(), "a client is not cut off for a head the node does not read");
    assertEquals(0, counters.headerTimeouts.sum());
    channel.config().setAutoRead(true);
    pass(channel, TIMEOUT_NANOS);
    assertFalse(channel.isActive(), "once the node reads again the head has its time, and no more");
    assertEquals(1, counters.headerTimeouts.sum());
  }
}
