package io.relay.harness;

import io.relay.client.ReconnectingClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;

/**
 * A reconnecting client that records what a user would notice: when it was connected, how each
 * connection ended, and the sequence numbers it received.
 */
public final class Participant implements ReconnectingClient.Listener, AutoCloseable {
  /** One connection: opened and (unless still open) closed, in System.nanoTime. */
  public record Connection(long openedAt, long closedAt, int closeCode) {
    boolean isOpen() {
      return closedAt == 0;
    }
  }

  /** One received message. */
  public record Received(long seq, long at) {}

  public final String name;
  private final ReconnectingClient client;
  private final List<Connection> connections = new ArrayList<>();
  private final List<Received> received = new ArrayList<>();
  private final List<Integer> refusals = new ArrayList<>();

  /**
   * @param relayBase where to connect instead of the URI's own host and port (a client behind
   *     another ingress replica), or null
   */
  public Participant(
      String name, HttpClient http, ScheduledExecutorService scheduler, String accessUrl, URI relayBase, String topic, String token) {
    this.name = name;
    this.client =
        new ReconnectingClient(
            http,
            scheduler,
            new ReconnectingClient.Options(URI.create(accessUrl), topic, token, Duration.ofMillis(100), Duration.ofSeconds(2), relayBase),
            this);
  }

  public Participant start() {
    client.start();
    return this;
  }

  public boolean send(long seq) {
    return client.sendText(Long.toString(seq));
  }

  public synchronized boolean isConnected() {
    return !connections.isEmpty() && connections.get(connections.size() - 1).isOpen();
  }

  public boolean isStopped() {
    return client.isStopped();
  }

  @Override
  public synchronized void onOpen(int attempt) {
    connections.add(new Connection(System.nanoTime(), 0, 0));
  }

  @Override
  public void onMessage(boolean text, byte[] data) {
    long now = System.nanoTime();
    long seq = Long.parseLong(new String(data, StandardCharsets.UTF_8));
    synchronized (this) {
      received.add(new Received(seq, now));
    }
  }

  @Override
  public synchronized void onClose(int code, String reason) {
    if (!connections.isEmpty() && connections.get(connections.size() - 1).isOpen()) {
      Connection open = connections.remove(connections.size() - 1);
      connections.add(new Connection(open.openedAt(), System.nanoTime(), code));
    }
  }

  @Override
  public synchronized void onRefused(int status, String detail) {
    refusals.add(status);
  }

  public synchronized List<Connection> connections() {
    return List.copyOf(connections);
  }

  public synchronized List<Received> received() {
    return List.copyOf(received);
  }

  /** How many messages it has received, over all its connections. */
  public synchronized int receivedCount() {
    return received.size();
  }

  public synchronized List<Integer> refusals() {
    return List.copyOf(refusals);
  }

  /** How many connections ended with {@code code}. */
  public synchronized long closesWith(int code) {
    return connections.stream().filter(c -> !c.isOpen() && c.closeCode() == code).count();
  }

  @Override
  public void close() {
    client.close();
  }
}
