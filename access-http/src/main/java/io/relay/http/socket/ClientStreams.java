package io.relay.http.socket;

import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.ActorMaterializer;
import org.apache.pekko.stream.ActorMaterializerSettings;
import org.apache.pekko.stream.Materializer;

/**
 * The materializer of the node's client connections: their streams run on a dispatcher of their
 * own, {@code relay-connections-dispatcher} (one thread per core, this module's reference.conf,
 * and the client ports' selector threads for what they wake while idle: {@link SelectorRuns}),
 * apart from the default dispatcher, where the actors and the management port's routes and
 * health checks run: {@code /ready} and {@code /metrics} answer while the connections keep every
 * core busy.
 *
 * <p>{@link ActorMaterializerSettings#withDispatcher} is deprecated in Pekko, but no other API
 * gives a materializer a default dispatcher other than the system materializer's.
 */
public final class ClientStreams {
  /** The dispatcher the node's client connections run on. */
  public static final String DISPATCHER = "relay-connections-dispatcher";

  private ClientStreams() {}

  @SuppressWarnings("deprecation")
  public static Materializer materializer(ActorSystem<?> system) {
    return ActorMaterializer.create(
        ActorMaterializerSettings.create(system.classicSystem()).withDispatcher(DISPATCHER), system.classicSystem(), "client-streams");
  }
}
