package io.relay.harness;

import io.relay.bench.SelectorLoop;
import io.relay.client.ReconnectPolicy;
import io.relay.client.ReconnectingClient;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A reconnecting client that records what a user would notice: when it was connected, how each
 * connection ended, and the sequence numbers it received. Each message names its topic ({@link
 * #send}); one that does not name this participant's topic, or is not a message of the harness's
 * form at all (another session's bytes, or bytes overwritten on the way), is kept apart as foreign. It reconnects as practable's clients
 * do ({@link ReconnectPolicy}: backoff from 100 ms up to 2 s), on a shared {@link SelectorLoop}.
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
  private final SelectorLoop loop;
  private final LoopClient client;
  private final List<Connection> connections = new ArrayList<>();
  private final List<Received> received = new ArrayList<>();
  private final List<Integer> refusals = new ArrayList<>();
  /** What the messages of this participant's topic start with. */
  private final String prefix;
  private final List<String> foreign = new ArrayList<>();

  /**
   * @param relayBase where to connect instead of the URI's own host and port (a client behind
   *     another ingress replica), or null
   */
  Participant(String name, SelectorLoop loop, String accessUrl, URI relayBase, String topic, String token) {
    this(name, loop, accessUrl, relayBase, topic, token, Duration.ZERO);
  }

  /** @param silence how long a connection may stay silent before it is given up (zero: forever) */
  Participant(String name, SelectorLoop loop, String accessUrl, URI relayBase, String topic, String token, Duration silence) {
    this.name = name;
    this.loop = loop;
    this.prefix = topic + " ";
    this.client =
        new LoopClient(
            loop, URI.create(accessUrl), topic, token, relayBase, new ReconnectPolicy(Duration.ofMillis(100), Duration.ofSeconds(2)), this, silence);
  }

  /** The loop this participant's connections run on. */
  SelectorLoop loop() {
    return loop;
  }

  public Participant start() {
    client.start();
    return this;
  }

  /**
   * Sends {@code seq} as a text message naming the topic ({@code "<topic> <seq>"}) if connected;
   * call on {@link #loop()}'s thread.
   */
  public boolean send(long seq) {
    return client.sendText(prefix + seq);
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
    String message = new String(data, StandardCharsets.ISO_8859_1);
    long seq = seqOf(message);
    synchronized (this) {
      if (seq < 0) {
        foreign.add(data.length + " bytes: " + message.substring(0, Math.min(48, message.length())).replaceAll("[^ -~]", "?"));
      } else {
        received.add(new Received(seq, now));
      }
    }
  }

  /** The sequence number of a message of this participant's topic, or -1 for any other bytes. */
  private long seqOf(String message) {
    if (!message.startsWith(prefix) || message.length() == prefix.length() || message.length() > prefix.length() + 18) {
      return -1;
    }
    for (int i = prefix.length(); i < message.length(); i++) {
      if (message.charAt(i) < '0' || message.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(message.substring(prefix.length()));
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

  /** The messages received that were not of this participant's topic, each described. */
  public synchronized List<String> foreign() {
    return List.copyOf(foreign);
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
