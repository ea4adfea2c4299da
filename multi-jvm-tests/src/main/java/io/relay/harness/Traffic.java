package io.relay.harness;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Live traffic on a set of topics: per topic one writer sending sequence-numbered frames at a
 * fixed rate while it is connected, and readers recording what they get.
 */
public final class Traffic implements AutoCloseable {
  /** One topic's participants and what its writer sent. */
  public static final class Topic {
    public final String name;
    public final Participant writer;
    public final List<Participant> readers = new ArrayList<>();
    private final List<long[]> sent = new ArrayList<>();
    private long nextSeq;

    Topic(String name, Participant writer) {
      this.name = name;
      this.writer = writer;
    }

    void sendOne() {
      if (!writer.isConnected()) {
        return;
      }
      long seq = nextSeq;
      long at = System.nanoTime();
      if (writer.send(seq)) {
        nextSeq++;
        recordSent(seq, at);
      }
    }

    void recordSent(long seq, long at) {
      synchronized (sent) {
        sent.add(new long[] {seq, at});
      }
    }

    List<long[]> sent() {
      synchronized (sent) {
        return List.copyOf(sent);
      }
    }

    public List<Participant> participants() {
      List<Participant> all = new ArrayList<>(readers);
      all.add(0, writer);
      return all;
    }
  }

  private final HttpClient http = HttpClient.newHttpClient();
  /** Runs the clients' reconnects; never blocked by a writer waiting on a slow send. */
  private final ScheduledExecutorService clients = Executors.newScheduledThreadPool(2);
  /** Paces the writers. */
  private final ScheduledExecutorService senders = Executors.newScheduledThreadPool(4);
  private final String accessUrl;
  private final URI relayBase;
  private final Map<String, Topic> topics = new LinkedHashMap<>();
  private final List<ScheduledFuture<?>> sending = new ArrayList<>();

  /** Traffic that reaches the relay wherever the returned URIs point. */
  public Traffic(String accessUrl) {
    this(accessUrl, null);
  }

  /** Traffic whose relay connections go to {@code relayBase} (another ingress replica). */
  public Traffic(String accessUrl, URI relayBase) {
    this.accessUrl = accessUrl;
    this.relayBase = relayBase;
  }

  /** Adds topics {@code prefix-0..n-1}, each with a writer and {@code readers} readers. */
  public Traffic topics(String prefix, int n, int readers) {
    for (int i = 0; i < n; i++) {
      String name = prefix + "-" + i;
      Topic topic = new Topic(name, participant(name, name + "/writer", "booking-" + name, "read", "write"));
      for (int r = 0; r < readers; r++) {
        topic.readers.add(participant(name, name + "/reader" + r, "booking-" + name, "read"));
      }
      topics.put(name, topic);
    }
    return this;
  }

  /** A participant of this traffic's access URL and ingress. */
  public Participant participant(String topic, String name, String bookingId, String... scopes) {
    return new Participant(name, http, clients, accessUrl, relayBase, topic, Tokens.session(topic, bookingId, scopes));
  }

  /** Connects everyone and waits until all are connected. */
  public Traffic connect(Duration timeout) {
    topics.values().forEach(t -> t.participants().forEach(Participant::start));
    Await.until("every participant is connected", timeout, this::allConnected);
    return this;
  }

  public boolean allConnected() {
    return topics.values().stream().allMatch(t -> t.participants().stream().allMatch(Participant::isConnected));
  }

  /** Adds a reader to a topic (a user joining late) and connects it. */
  public Participant join(String topic, String name) {
    Participant late = participant(topic, name, "booking-" + topic, "read").start();
    topics.get(topic).readers.add(late);
    return late;
  }

  /** Every writer sends one frame every {@code period}. */
  public void startSending(Duration period) {
    for (Topic topic : topics.values()) {
      sending.add(senders.scheduleAtFixedRate(topic::sendOne, 0, period.toMillis(), TimeUnit.MILLISECONDS));
    }
  }

  /**
   * Stops sending and waits, at most {@code settle}, until every connected reader has its topic's
   * last frame; what is still missing then is counted by the delivery analysis.
   */
  public void stopSending(Duration settle) {
    sending.forEach(s -> s.cancel(false));
    sending.clear();
    Await.upTo("every connected reader has its topic's last frame", settle, this::lastFramesDelivered);
  }

  private boolean lastFramesDelivered() {
    for (Topic topic : topics.values()) {
      List<long[]> sent = topic.sent();
      if (sent.isEmpty()) {
        continue;
      }
      long last = sent.get(sent.size() - 1)[0];
      for (Participant reader : topic.readers) {
        if (reader.isConnected() && reader.received().stream().noneMatch(r -> r.seq() == last)) {
          return false;
        }
      }
    }
    return true;
  }

  /** How often connection attempts were refused, by HTTP status (0: no answer). */
  public Map<Integer, Long> refusals() {
    Map<Integer, Long> counts = new java.util.TreeMap<>();
    topics.values().forEach(t -> t.participants().forEach(p -> p.refusals().forEach(s -> counts.merge(s, 1L, Long::sum))));
    return counts;
  }

  public Map<String, Topic> topics() {
    return topics;
  }

  /** What users saw, allowing losses only inside reconnect windows. */
  public Delivery.Summary analyse(Duration allowance) {
    return Delivery.analyse(topics.values(), allowance, System.nanoTime());
  }

  @Override
  public void close() {
    sending.forEach(s -> s.cancel(true));
    topics.values().forEach(t -> t.participants().forEach(Participant::close));
    senders.shutdownNow();
    clients.shutdownNow();
  }
}
