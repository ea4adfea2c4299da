package io.relay.node;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import com.typesafe.config.Config;
import io.relay.config.SettingsReader;
import java.net.URL;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.LoggerFactory;

/**
 * Switches the node's logs between readable text and one JSON object a line, and writes out what
 * logback's async appender still holds when the node exits.
 */
final class LogFormat {
  private static final String JSON_CONFIGURATION = "logback-json.xml";
  /**
   * How long the exit waits for coordinated shutdown to reach the actor system's termination: a
   * safety net, well past the 30 s the drain and leave take.
   */
  private static final long FLUSH_DEADLINE_SECONDS = 60;
  /**
   * How long the exit waits for the actor system to stop once coordinated shutdown has asked it
   * to: the phase's own timeout (10 s) and a second more. Past it the node exits all the same, with
   * what is queued written.
   */
  private static final long TERMINATION_DEADLINE_SECONDS = 11;

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

  /**
   * Stops logback once the actor system has stopped its actors, so the lines queued in its async
   * appender (the drain and shutdown lines among them) are written before the JVM exits. It runs
   * as a JVM shutdown hook: the JVM does not exit before its hooks end, and logback's own shutdown
   * hook would stop logging as soon as the JVM's shutdown begins.
   *
   * <p>The hook waits for the system's termination callbacks, never for {@code whenTerminated}:
   * after a cluster Leave or a downing, coordinated shutdown calls {@code System.exit} from inside
   * {@code whenTerminated}'s completion, and that call waits for this hook while the futures
   * chained after it are not yet complete, so a hook waiting for one of them would wait out its
   * whole deadline. Termination callbacks run before {@code whenTerminated} completes.
   *
   * <p>Once coordinated shutdown has reached the actor system's termination, the hook waits at
   * most {@link #TERMINATION_DEADLINE_SECONDS} more: a termination that hangs (Artery flushing its
   * transports, seen now and then with TLS links) must not keep the JVM alive.
   */
  static void flushAtExit(ActorSystem<?> system) {
    CompletableFuture<Void> stopped = new CompletableFuture<>();
    CompletableFuture<Void> terminating = new CompletableFuture<>();
    system.classicSystem().registerOnTermination(() -> stopped.complete(null));
    CoordinatedShutdown shutdown = CoordinatedShutdown.get(system);
    shutdown.addTask(
        CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
        "note-termination",
        () -> {
          terminating.complete(null);
          return CompletableFuture.completedFuture(Done.getInstance());
        });
    shutdown.addJvmShutdownHook(
        () -> {
          try {
            CompletableFuture.anyOf(terminating, stopped).get(FLUSH_DEADLINE_SECONDS, TimeUnit.SECONDS);
            stopped.get(TERMINATION_DEADLINE_SECONDS, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (ExecutionException | TimeoutException e) {
            // exiting anyway: write what is queued
          }
          ((LoggerContext) LoggerFactory.getILoggerFactory()).stop();
        });
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
