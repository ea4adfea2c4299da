package io.relay.http.log;

import java.time.Duration;
import java.util.regex.Pattern;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.event.LoggingAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The log of Pekko HTTP's server layer on the node's access and relay ports (plain and HTTPS): what
 * it says about requests and connections is caused by clients, so its warnings and errors are
 * rate-limited ({@link WarningLimiter}), and any request target or token in them is cut out.
 *
 * <p>Pekko's parser errors and illegal-header warnings, which print the request target and header
 * values, are turned off in the configuration ({@code pekko.http.server.parsing}) and malformed
 * requests are answered by {@link MalformedRequests}, which logs only their status; cutting here
 * is the second line, for the few lines that name a request (an early response, a failed response
 * stream).
 */
public final class ServerLog implements LoggingAdapter {
  /** What the logger is called: these lines come from Pekko HTTP, on the relay's behalf. */
  public static final String NAME = "io.relay.http.server";
  /** A request target's query, or a whole target after a method. */
  private static final Pattern QUERY = Pattern.compile("\\?[^\\s'\"\\]]*");
  /** A JWT (a base64url JSON header, then payload and signature). */
  private static final Pattern TOKEN = Pattern.compile("eyJ[A-Za-z0-9_-]*\\.[A-Za-z0-9_.-]*");
  /** Where a line stops being the same for every occurrence of its kind. */
  private static final Pattern KIND_END = Pattern.compile("[:'\"\\[(/?0-9]");
  private static final int MAX_KIND_LENGTH = 60;

  private final Logger log;
  private final WarningLimiter limiter;

  ServerLog(Logger log, WarningLimiter limiter) {
    this.log = log;
    this.limiter = limiter;
  }

  /** A server layer's log whose warnings and errors are rate-limited to one of a kind per {@code interval}. */
  public static ServerLog start(ActorSystem<?> system, Duration interval) {
    Logger log = LoggerFactory.getLogger(NAME);
    return new ServerLog(log, WarningLimiter.start(system, log, interval));
  }

  /** {@code message} without query strings and tokens. */
  static String clean(String message) {
    return TOKEN.matcher(QUERY.matcher(message).replaceAll("?<query>")).replaceAll("<token>");
  }

  /** The part of a line that every line of its kind shares: up to its first detail. */
  static String kind(String message) {
    var end = KIND_END.matcher(message);
    String head = end.find() ? message.substring(0, end.start()) : message;
    return head.length() > MAX_KIND_LENGTH ? head.substring(0, MAX_KIND_LENGTH) : head.strip();
  }

  @Override
  public boolean isErrorEnabled() {
    return log.isErrorEnabled();
  }

  @Override
  public boolean isWarningEnabled() {
    return log.isWarnEnabled();
  }

  @Override
  public boolean isInfoEnabled() {
    return log.isInfoEnabled();
  }

  @Override
  public boolean isDebugEnabled() {
    return log.isDebugEnabled();
  }

  @Override
  public void notifyError(String message) {
    String line = clean(message);
    limiter.log(Level.ERROR, kind(line), "{}", line);
  }

  @Override
  public void notifyError(Throwable cause, String message) {
    String line = clean(message);
    // the cause's own message is left out: Pekko builds some from the request
    limiter.log(Level.ERROR, kind(line), "{} ({})", line, cause.getClass().getName());
  }

  @Override
  public void notifyWarning(String message) {
    String line = clean(message);
    limiter.log(Level.WARN, kind(line), "{}", line);
  }

  @Override
  public void notifyInfo(String message) {
    log.info("{}", clean(message));
  }

  @Override
  public void notifyDebug(String message) {
    log.debug("{}", clean(message));
  }
}
