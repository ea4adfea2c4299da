package io.relay.topic;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every live connection of this node, for reports and gauges; written by topic actors (and by
 * their registry for the connections of one that failed).
 */
public final class ConnectionDirectory {
  private final ConcurrentHashMap<Long, Connection> connections = new ConcurrentHashMap<>();
  private final List<CompletableFuture<Void>> emptyWaiters = new ArrayList<>();

  void add(Connection connection) {
    connections.put(connection.id(), connection);
  }

  void remove(Connection connection) {
    connections.remove(connection.id());
    if (connections.isEmpty()) {
      List<CompletableFuture<Void>> waiting;
      synchronized (emptyWaiters) {
        waiting = new ArrayList<>(emptyWaiters);
        emptyWaiters.clear();
      }
      waiting.forEach(w -> w.complete(null));
    }
  }

  /** Completes once no connection is left (at once if none is). */
  public CompletionStage<Void> whenEmpty() {
    CompletableFuture<Void> waiter = new CompletableFuture<>();
    synchronized (emptyWaiters) {
      emptyWaiters.add(waiter);
    }
    if (connections.isEmpty()) {
      waiter.complete(null);
    }
    return waiter;
  }

  /** A snapshot of the live connections. */
  public List<Connection> connections() {
    return new ArrayList<>(connections.values());
  }

  /** Reports of every live connection, tagged with this node's address. */
  public List<ConnectionReport> reports(String node) {
    return connections.values().stream().map(c -> ConnectionReport.of(c, node)).toList();
  }

  public int size() {
    return connections.size();
  }

  /** How many distinct topics have a live connection. */
  public long topicCount() {
    return connections.values().stream().map(c -> c.grant().topic()).distinct().count();
  }
}
