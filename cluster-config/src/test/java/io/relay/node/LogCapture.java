package io.relay.node;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.read.ListAppender;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Everything this JVM logs at INFO and above while it is open, as the production configuration
 * would let through (the test configuration keeps Pekko at WARN): each line with its level,
 * logger, message, key-value pairs and the whole stack trace of its cause.
 */
final class LogCapture implements AutoCloseable {
  private static final List<String> LOGGERS = List.of(Logger.ROOT_LOGGER_NAME, "org.apache.pekko", "io.relay");

  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  /** The levels set before, null where the logger had none of its own. */
  private final Map<String, Level> levels = new HashMap<>();

  LogCapture() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    LOGGERS.forEach(name -> levels.put(name, context.getLogger(name).getLevel()));
    appender.setContext(context);
    appender.start();
    LOGGERS.forEach(name -> context.getLogger(name).setLevel(Level.INFO));
    context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(appender);
  }

  /** Every line so far, one after the other. */
  String text() {
    StringBuilder text = new StringBuilder();
    for (ILoggingEvent event : lines()) {
      text.append(event.getLevel()).append(' ').append(event.getLoggerName()).append(" - ").append(event.getFormattedMessage());
      if (event.getKeyValuePairs() != null) {
        event.getKeyValuePairs().forEach(kv -> text.append(' ').append(kv.key).append('=').append(kv.value));
      }
      event.getMDCPropertyMap().forEach((k, v) -> text.append(' ').append(k).append('=').append(v));
      if (event.getThrowableProxy() != null) {
        text.append('\n').append(ThrowableProxyUtil.asString(event.getThrowableProxy()));
      }
      text.append('\n');
    }
    return text.toString();
  }

  List<ILoggingEvent> lines() {
    synchronized (appender) { // what logback's appender appends under
      return List.copyOf(appender.list);
    }
  }

  /** The formatted messages so far that contain {@code text}. */
  List<String> messagesContaining(String text) {
    return lines().stream().map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(text)).toList();
  }

  @Override
  public void close() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(appender);
    levels.forEach((name, level) -> context.getLogger(name).setLevel(level));
    appender.stop();
  }
}
