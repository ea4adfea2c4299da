package io.relay.harness;

import io.relay.bench.SelectorLoop;
import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Live traffic on a set of topics: per topic one writer sending sequence-numbered frames at a
 * fixed rate while it is connected, and readers recording what they get.
 *
 * <p>It scales to thousands of participants without a thread per client: every connection is
 * non-blocking I/O on one of {@link #LOOPS} client loops (one thread each), which also pace their
 * writers, and participants connect {@link #CONNECT_BATCH} at a time.
 */
public final class Traffic implements AutoCloseable {
  /** One topic's participants and what its writer sent. */
  public static final class Topic {
    public final String name;
    public final Participant writer;
    public final List<Participant> readers = new ArrayList<>();
    private final List<long[]> sent = new ArrayList<>();
    private final List<Long> crashes = new ArrayList<>();
    private long nextSeq;

    Topic(String name, Participant writer) {
      this.name = name;
      this.writer = writer;
    }

    /** Runs on the writer's loop. */
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

    /** The node hosting this topic was killed at {@code at} (System.nanoTime). */
    synchronized void crashed(long at) {
      crashes.add(at);
    }

    synchronized List<Long> crashes() {
      return List.copyOf(crashes);
    }

    public List<Participant> participants() {
      List<Participant> all = new ArrayList<>(readers);
      all.add(0, writer);
      return all;
    }
  }

  /** Client loops, one thread each; participants are spread over them. */
  private static final int LOOPS = 2;
  /** Participants that start connecting together (well under a node's admissions in flight). */
  private static final int CONNECT_BATCH = 250;

  private final List<SelectorLoop> loops = new ArrayList<>();
  private int participants;
  private final String accessUrl;
  private final URI relayBase;
  private final Map<String, Topic> topics = new LinkedHashMap<>();
  private final List<SelectorLoop.Timer> sending = new ArrayList<>();
  private Duration silence = Duration.ZERO;

  /** Traffic that reaches the relay wherever the returned URIs point. */
  public Traffic(String accessUrl) {
    this(accessUrl, null);
  }

  /** Traffic whose relay connections go to {@code relayBase} (another ingress replica). */
  public Traffic(String accessUrl, URI relayBase) {
    this.accessUrl = accessUrl;
    this.relayBase = relayBase;
    for (int i = 0; i < LOOPS; i++) {
      loops.add(new SelectorLoop("traffic-" + i, 1000, () -> {}));
    }
  }

  /**
   * Participants added from now on give up a connection from which nothing arrived for {@code
   * limit} and reconnect (see {@link LoopClient}); zero, the default: they wait for the close.
   */
  public Traffic silence(Duration limit) {
    this.silence = limit;
    return this;
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
    SelectorLoop loop = loops.get(participants++ % loops.size());
    return new Participant(name, loop, accessUrl, relayBase, topic, Tokens.booked(topic, bookingId, scopes), silence);
  }

  /**
   * Connects everyone, {@link #CONNECT_BATCH} at a time, and waits until all are connected;
   * {@code timeout} bounds the whole.
   */
  public Traffic connect(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    List<Participant> all = topics.values().stream().flatMap(t -> t.participants().stream()).toList();
    for (int from = 0; from < all.size(); from += CONNECT_BATCH) {
      List<Participant> batch = all.subList(from, Math.min(all.size(), from + CONNECT_BATCH));
      batch.forEach(Participant::start);
      Duration left = Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
      Await.until(
          "participants " + from + " to " + (from + batch.size() - 1) + " of " + all.size() + " are connected (within " + timeout + " for all)",
          left,
          () -> batch.stream().allMatch(Participant::isConnected));
    }
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
      sending.add(topic.writer.loop().every(period.toMillis(), topic::sendOne));
    }
  }

  /**
   * Waits until every reader has received {@code frames} more frames than it had when called:
   * traffic has flowed to everyone for a while (before an event, or after convergence).
   */
  public void awaitFrames(String when, int frames, Duration timeout) {
    Map<Participant, Integer> start = new HashMap<>();
    topics.values().forEach(t -> t.readers.forEach(r -> start.put(r, r.receivedCount())));
    Await.until("every reader has received " + frames + " more frames " + when, timeout,
        () -> start.entrySet().stream().allMatch(e -> e.getKey().receivedCount() - e.getValue() >= frames));
  }

  /**
   * Stops sending and waits, at most {@code settle}, until every connected reader has its topic's
   * last frame; what is still missing then is counted by the delivery analysis.
   */
  public void stopSending(Duration settle) {
    sending.forEach(SelectorLoop.Timer::cancel);
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

  /**
   * Records that the node hosting {@code names} was killed at {@code at} (System.nanoTime), for
   * the delivery analysis: their connections were cut off from that moment on.
   */
  public void crashed(Collection<String> names, long at) {
    names.forEach(name -> topics.get(name).crashed(at));
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

  /** What the users of {@code names} saw, by the same rules. */
  public Delivery.Summary analyse(Duration allowance, Collection<String> names) {
    return Delivery.analyse(names.stream().map(topics::get).toList(), allowance, System.nanoTime());
  }

  @Override
  public void close() {
    sending.forEach(SelectorLoop.Timer::cancel);
    topics.values().forEach(t -> t.participants().forEach(Participant::close));
    loops.forEach(SelectorLoop::close);
  }
}
