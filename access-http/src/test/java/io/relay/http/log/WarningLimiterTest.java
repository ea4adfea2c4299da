package io.relay.http.log;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What a flood of client-caused warnings leaves in the log: one line of each kind per interval and
 * a count of the rest; and what Pekko HTTP's lines keep of a request (nothing of its target's query
 * or a token).
 */
class WarningLimiterTest {
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
  private Logger logger;
  private WarningLimiter limiter;

  @BeforeEach
  void capture() {
    logger = (Logger) LoggerFactory.getLogger("warning-limiter-test");
    logger.setLevel(Level.INFO);
    lines.start();
    logger.addAppender(lines);
    limiter = new WarningLimiter(logger, INTERVAL, now::get);
  }

  @AfterEach
  void release() {
    logger.detachAppender(lines);
  }

  private List<String> messages() {
    return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  private void advance(Duration by) {
    now.addAndGet(by.toNanos());
  }

  @Test
  void aFloodOfOneKindIsOneLineAndACountPerInterval() {
    for (int i = 0; i < 1000; i++) {
      limiter.warn("refused a request: {}", i);
    }
    assertEquals(List.of("refused a request: 0"), messages(), "the first line of the interval only");
    limiter.flush();
    assertEquals(1, messages().size(), "no count before the interval ends");
    advance(INTERVAL);
    limiter.flush();
    assertEquals(2, messages().size());
    assertEquals(
        "999 more lines like \"refused a request: {}\" in the last 10 s (rate-limited: one line of a kind per 10 s)",
        messages().get(1));
    advance(INTERVAL);
    limiter.flush();
    assertEquals(2, messages().size(), "a quiet interval adds nothing");
    limiter.warn("refused a request: {}", "again");
    assertEquals("refused a request: again", messages().get(2), "after a quiet interval the next line is written");
  }

  @Test
  void eachKindHasItsOwnWindowAndALaterLineCarriesTheCountOfTheLastInterval() {
    limiter.warn("kind a {}", 1);
    limiter.warn("kind b {}", 1);
    limiter.warn("kind a {}", 2);
    assertEquals(List.of("kind a 1", "kind b 1"), messages());
    advance(INTERVAL);
    limiter.warn("kind a {}", 3);
    assertEquals(List.of("kind a 1", "kind b 1", "1 more lines like \"kind a {}\" in the last 10 s (rate-limited: one line of a kind per 10 s)", "kind a 3"), messages());
  }

  @Test
  void kindsMadeUpByClientsShareOneWindowBeyondTheLimit() {
    for (int i = 0; i < 10 * WarningLimiter.MAX_KINDS; i++) {
      limiter.log(org.slf4j.event.Level.WARN, "kind " + i, "line {}", i);
    }
    assertEquals(WarningLimiter.MAX_KINDS + 1, messages().size(), "one line per tracked kind and one for all others");
  }

  @Test
  void errorsKeepTheirCause() {
    limiter.error("request failed", new IllegalStateException("boom"));
    assertEquals(Level.ERROR, lines.list.get(0).getLevel());
    assertEquals("boom", lines.list.get(0).getThrowableProxy().getMessage());
  }
}
