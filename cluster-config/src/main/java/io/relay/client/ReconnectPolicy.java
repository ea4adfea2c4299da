package io.relay.client;

import io.relay.ws.CloseCodes;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When a relay client connects again, as practable's clients do: at once after its topic moved
 * (4001), never after its booking was denied (4003), and otherwise after an exponential backoff
 * with full jitter (a random delay up to a cap that doubles with each failure), on top of what the
 * server asked for with {@code Retry-After}, so that clients refused together do not all come back
 * together. One instance per client; not thread-safe.
 */
public final class ReconnectPolicy {
  /** What a client does after one of its connections closed. */
  public enum Next {
    /** Fetch a new code and connect at once. */
    NOW,
    /** Connect again after {@link #delayMillis}. */
    LATER,
    /** Stop for good. */
    STOP
  }

  /** The longest wait a server's {@code Retry-After} asks for that a client takes as it is. */
  public static final Duration MAX_RETRY_AFTER = Duration.ofMinutes(10);

  private final long firstCapMillis;
  private final long lastCapMillis;
  /** The cap of the next delay: doubled by each failure up to the last, back to the first on a connection. */
  private long capMillis;

  /** @param minBackoff the first cap; each failure doubles it up to {@code maxBackoff} */
  public ReconnectPolicy(Duration minBackoff, Duration maxBackoff) {
    firstCapMillis = minBackoff.toMillis();
    lastCapMillis = Math.max(firstCapMillis, maxBackoff.toMillis());
    capMillis = firstCapMillis;
  }

  /** What to do after a connection closed with {@code code}. */
  public static Next afterClose(int code) {
    if (code == CloseCodes.BOOKING_DENIED) {
      return Next.STOP;
    }
    return code == CloseCodes.TOPIC_MOVED ? Next.NOW : Next.LATER;
  }

  /** A connection opened: the next failure starts from the first cap again. */
  public void connected() {
    capMillis = firstCapMillis;
  }

  /** How long to wait before the next attempt, after a failure; doubles the cap for the one after. */
  public long delayMillis(Duration serverAsked) {
    long delay = serverAsked.toMillis() + ThreadLocalRandom.current().nextLong(capMillis + 1);
    capMillis = Math.min(lastCapMillis, capMillis * 2);
    return delay;
  }

  /**
   * The delay a {@code Retry-After} header (in seconds) asks for, at most {@link
   * #MAX_RETRY_AFTER}; zero when absent or unreadable.
   */
  public static Duration retryAfter(String header) {
    if (header == null) {
      return Duration.ZERO;
    }
    try {
      return Duration.ofSeconds(Math.min(MAX_RETRY_AFTER.toSeconds(), Math.max(0, Long.parseLong(header.trim()))));
    } catch (NumberFormatException e) {
      return Duration.ZERO;
    }
  }
}
