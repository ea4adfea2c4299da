package io.relay.http.socket;

import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.ActorAttributes;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.RunnableGraph;

/**
 * How the node's client connections' streams run: on a dispatcher of their own, {@code
 * relay-connections-dispatcher} (one thread per core, this module's reference.conf, and the client
 * ports' selector threads for what they wake while idle: {@link SelectorRuns}), apart from the
 * default dispatcher, where the actors and the management port's routes and health checks run:
 * {@code /ready} and {@code /metrics} answer while the connections keep every core busy. The
 * dispatcher is an attribute of each connection's graph ({@link #run}), on a materializer of their
 * own.
 */
public final class ClientStreams {
  /** The dispatcher the node's client connections run on. */
  public static final String DISPATCHER = "relay-connections-dispatcher";

  private ClientStreams() {}

  /** The materializer of the node's client connections, apart from the system's. */
  public static Materializer materializer(ActorSystem<?> system) {
    return Materializer.createMaterializer(system);
  }

  /** Runs a connection's graph on the connections' dispatcher. */
  static <M> M run(RunnableGraph<M> graph, Materializer materializer) {
    return graph.withAttributes(ActorAttributes.dispatcher(DISPATCHER)).run(materializer);
  }
}
