package io.relay.topic;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every live connection of this node, for reports and gauges; written only by topic actors.
 */
public final class ConnectionDirectory {
  private final ConcurrentHashMap<Long, Connection> connections = new ConcurrentHashMap<>();

  void add(Connection connection) {
    connections.put(connection.id(), connection);
  }

  void remove(Connection connection) {
    connections.remove(connection.id());
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
