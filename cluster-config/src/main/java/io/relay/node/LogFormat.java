package io.relay.node;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.net.URL;
import org.slf4j.LoggerFactory;

/** Switches the node's logs between readable text and one JSON object a line. */
final class LogFormat {
  private static final String JSON_CONFIGURATION = "logback-json.xml";

  private LogFormat() {}

  /**
   * Applies {@code relay.log-format}; text is logback.xml's default, json reloads logback with
   * logback-json.xml.
   */
  static void apply(Config config) {
    String format = new SettingsReader(config).string("relay.log-format");
    switch (format) {
      case "text" -> { }
      case "json" -> reconfigure(LogFormat.class.getClassLoader().getResource(JSON_CONFIGURATION));
      default -> throw SettingsReader.invalid("relay.log-format", "expected text or json, got '" + format + "'");
    }
  }

  private static void reconfigure(URL configuration) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    context.reset();
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    try {
      configurator.doConfigure(configuration);
    } catch (JoranException e) {
      throw new IllegalStateException("cannot load " + configuration, e);
    }
  }
}
