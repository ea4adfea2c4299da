package io.relay.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code java -cp relay-bench.jar io.relay.bench.Churn}: a churn of short-lived readers against
 * one relay node, checking every byte each reader receives. Each topic has one writer sending
 * binary frames of random size at a steady rate ({@link ChurnFrames}), so a reader can tell its
 * topic's intact frame from another topic's ({@code foreign}) and from bytes that are no writer's
 * frame ({@code corrupt}: overwritten on the way). Readers live a random
 * while and then close, most by destroying the TCP connection with no close frame, the rest with
 * a close frame, and reconnect at once with a new code; some stop reading for a while and then read
 * on (slow readers, whose oldest queued frames the node drops: counted apart, as their gaps); every so often one topic's booking is denied
 * and, a little later, allowed again. Within each connection of a reader that kept reading, the
 * sequence numbers must follow one another ({@code gaps}, {@code reordered}).
 *
 * <p>With {@code --session-seconds}, topics are sessions: each lives a random while around that
 * mean, its writer and readers then close, and a new session (a new topic and booking) takes its
 * place, so sessions start at a steady rate, as a lab's bookings do.
 *
 * <p>Prints one JSON object and appends it to {@code --json}; exits with 1 when any frame was
 * foreign, corrupt, missing or out of order, or the node counted a buffer accounting fault
 * ({@code --metrics}). It starts no process; the harness's soak ({@code SoakIT}) runs it against
 * three nodes behind a proxy.
 *
 * <p>Its clients are Jetty's WebSocket client, a stack independent of the node's and of the JDK's
 * ({@code java.net.http.WebSocket} itself delivered, on 2 cores at about 5,000 frames a second,
 * a few messages a minute made of the start of one frame and the next frame, which Node.js's
 * {@code ws} readers on the same topics never saw).
 */
@Command(
    name = "relay-churn",
    mixinStandardHelpOptions = true,
    description = "Churn of short-lived readers against one relay node; every frame received is checked byte for byte.")
public final class Churn implements Callable<Integer> {
  private static final Pattern FAULTS = Pattern.compile("(?m)^relay_buffer_faults_total\\s+([0-9.eE+]+)");

  @Option(names = "--access", defaultValue = "http://127.0.0.1:3000", description = "The node's access API (default: ${DEFAULT-VALUE}).")
  URI access;

  @Mixin NodeKey node;

  @Option(names = "--metrics", description = "The node's Prometheus endpoint, for relay_buffer_faults_total (e.g. http://127.0.0.1:8558/metrics).")
  URI metrics;

  @Option(names = "--seconds", defaultValue = "60", description = "How long the churn runs (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Option(names = "--topics", defaultValue = "40", description = "Topics open at once, each with one writer (default: ${DEFAULT-VALUE}).")
  int topics;

  @Option(names = "--readers", defaultValue = "4", description = "Readers per topic, each reconnecting as soon as it closed (default: ${DEFAULT-VALUE}).")
  int readers;

  @Option(names = "--rate", defaultValue = "100", description = "Frames per second each writer sends (default: ${DEFAULT-VALUE}).")
  double rate;

  @Option(names = "--min-bytes", defaultValue = "1024", description = "Smallest frame (default: ${DEFAULT-VALUE}).")
  int minBytes;

  @Option(names = "--max-bytes", defaultValue = "16384", description = "Largest frame (default: ${DEFAULT-VALUE}).")
  int maxBytes;

  @Option(names = "--tls-ca", description = "PEM certificate to trust for an https access API and its wss codes (the node's own, self-signed).")
  Path tlsCa;

  @Option(names = "--min-life-ms", defaultValue = "200", description = "Shortest life of a reader's connection (default: ${DEFAULT-VALUE}).")
  int minLifeMs;

  @Option(names = "--max-life-ms", defaultValue = "2000", description = "Longest life of a reader's connection (default: ${DEFAULT-VALUE}).")
  int maxLifeMs;

  @Option(names = "--abrupt", defaultValue = "0.6", description = "Share of reader connections that end by destroying the socket (default: ${DEFAULT-VALUE}).")
  double abrupt;

  @Option(names = "--slow", defaultValue = "0.2", description = "Share of reader connections that stop reading for --slow-ms in the middle of their life (default: ${DEFAULT-VALUE}).")
  double slow;

  @Option(names = "--slow-ms", defaultValue = "5000", description = "How long a slow reader stops reading, between two stretches of its life's length (default: ${DEFAULT-VALUE}).")
  int slowMs;

  @Option(names = "--deny-every", defaultValue = "20", description = "Seconds between denies of a random topic's booking; 0 for none (default: ${DEFAULT-VALUE}).")
  double denyEvery;

  @Option(names = "--deny-for", defaultValue = "2", description = "Seconds until a denied booking is allowed again (default: ${DEFAULT-VALUE}).")
  double denyFor;

  @Option(
      names = "--session-seconds",
      defaultValue = "0",
      description = "Mean life of a session (a topic, its writer and readers), after which a new one takes its place; 0: a topic lives the whole run (default: ${DEFAULT-VALUE}).")
  double sessionSeconds;

  @Option(names = "--run", description = "Names the run's topics (churn-<run>-<n>) and bookings (default: a new name).")
  String run;

  @Option(names = "--json", description = "Append the result as one JSON line to this file.")
  Path json;

  private final LongAdder sent = new LongAdder();
  private final LongAdder received = new LongAdder();
  private final LongAdder receivedBytes = new LongAdder();
  private final LongAdder foreign = new LongAdder();
  private final LongAdder corrupt = new LongAdder();
  private final LongAdder gaps = new LongAdder();
  private final LongAdder reordered = new LongAdder();
  private final LongAdder slowDropped = new LongAdder();
  private final LongAdder readerConnections = new LongAdder();
  private final LongAdder abruptCloses = new LongAdder();
  private final LongAdder refusals = new LongAdder();
  private final LongAdder denies = new LongAdder();
  private final LongAdder deniedCloses = new LongAdder();
  private final LongAdder readerErrors = new LongAdder();
  private final LongAdder sessions = new LongAdder();
  private final AtomicInteger topicIds = new AtomicInteger();
  private final List<Topic> live = new CopyOnWriteArrayList<>();
  private final ConcurrentLinkedQueue<String> samples = new ConcurrentLinkedQueue<>();
  private final List<Session> open = new ArrayList<>();
  private volatile boolean stopping;
  private Endpoints.Relay relay;
  private HttpClient client;
  private WebSocketClient sockets;
  private ScheduledExecutorService timers;

  public static void main(String[] args) {
    System.exit(new CommandLine(new Churn()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Map<String, Object> result = churn();
    BenchCommand.report(result, json);
    return clean(result) ? 0 : 1;
  }

  /** Whether no frame was foreign, corrupt, missing or out of order and the node counted no buffer fault. */
  public static boolean clean(Map<String, Object> result) {
    long faults = 0;
    for (String key : List.of("foreign", "corrupt", "gaps", "reordered")) {
      faults += ((Number) result.get(key)).longValue();
    }
    return faults == 0 && ((Number) result.get("nodeBufferFaults")).doubleValue() <= 0;
  }

  /** Runs the churn for {@code --seconds} and returns its result, as {@link #call} prints it. */
  public Map<String, Object> churn() throws Exception {
    if (minBytes < ChurnFrames.HEAD || maxBytes < minBytes) {
      throw new IllegalArgumentException("frames are at least " + ChurnFrames.HEAD + " bytes, and --max-bytes at least --min-bytes");
    }
    Tls tls = tlsCa == null ? null : Tls.trusting(tlsCa, Tls.DEFAULT_SUITE);
    relay = new Endpoints.Relay(access, node.secret(), node.audience, tls);
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
    if (tls == null) {
      sockets = new WebSocketClient();
    } else {
      SslContextFactory.Client trusting = new SslContextFactory.Client();
      trusting.setSslContext(tls.context());
      org.eclipse.jetty.client.HttpClient http = new org.eclipse.jetty.client.HttpClient();
      http.setSslContextFactory(trusting);
      sockets = new WebSocketClient(http);
    }
    sockets.setMaxBinaryMessageSize(maxBytes);
    sockets.start();
    timers = Executors.newScheduledThreadPool(2);
    if (run == null) {
      run = Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
    }
    for (int t = 0; t < topics; t++) {
      startSession();
    }
    long tickMicros = 10_000;
    timers.scheduleAtFixedRate(() -> live.forEach(t -> t.writer.tick(rate * tickMicros / 1e6)), tickMicros, tickMicros, TimeUnit.MICROSECONDS);
    if (denyEvery > 0) {
      long every = (long) (denyEvery * 1000);
      timers.scheduleAtFixedRate(() -> deny(live.get(ThreadLocalRandom.current().nextInt(live.size()))), every, every, TimeUnit.MILLISECONDS);
    }
    try {
      Thread.sleep((long) (seconds * 1000)); // the run's length, not a wait for a condition
    } finally {
      // also when interrupted: a caller that gave up on the run leaves no client behind
      stopping = true;
      timers.shutdownNow();
      synchronized (open) {
        open.forEach(Session::disconnect);
      }
      sockets.stop();
    }
    return result();
  }

  /** Opens a new session: a topic with its writer and readers, ended after a random life if sessions churn. */
  private void startSession() {
    int id = topicIds.getAndIncrement();
    Topic topic = new Topic(id, "churn-" + run + "-" + id);
    live.add(topic);
    sessions.increment();
    topic.writer.connect();
    for (int r = 0; r < readers; r++) {
      topic.readers.add(new Reader(topic));
    }
    topic.readers.forEach(Reader::connect);
    if (sessionSeconds > 0) {
      long lifeMs = (long) (sessionSeconds * 1000 * ThreadLocalRandom.current().nextDouble(0.5, 1.5));
      timers.schedule(() -> endSession(topic), lifeMs, TimeUnit.MILLISECONDS);
    }
  }

  /** Its writer closes normally, its readers as each chooses, and a new session takes its place. */
  private void endSession(Topic topic) {
    topic.over = true;
    live.remove(topic);
    topic.writer.close();
    topic.readers.forEach(Reader::end);
    if (!stopping) {
      startSession();
    }
  }

  private Map<String, Object> result() throws Exception {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("workload", "churn");
    r.put("cores", Runtime.getRuntime().availableProcessors());
    r.put("seconds", seconds);
    r.put("topics", topics);
    r.put("sessions", sessions.sum());
    r.put("readersPerTopic", readers);
    r.put("ratePerTopic", rate);
    r.put("framesSent", sent.sum());
    r.put("framesReceived", received.sum());
    r.put("bytesReceived", receivedBytes.sum());
    r.put("foreign", foreign.sum());
    r.put("corrupt", corrupt.sum());
    r.put("gaps", gaps.sum());
    r.put("reordered", reordered.sum());
    r.put("slowReadersDropped", slowDropped.sum());
    r.put("readerConnections", readerConnections.sum());
    r.put("abruptCloses", abruptCloses.sum());
    r.put("denies", denies.sum());
    r.put("closedByDeny", deniedCloses.sum());
    r.put("readerFailures", readerErrors.sum());
    r.put("refusedCodes", refusals.sum());
    r.put("nodeBufferFaults", nodeFaults());
    r.put("samples", List.copyOf(samples));
    return r;
  }

  /** The node's relay_buffer_faults_total, or -1 without {@code --metrics}. */
  private double nodeFaults() throws Exception {
    if (metrics == null) {
      return -1;
    }
    String body = client.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
    Matcher m = FAULTS.matcher(body);
    if (!m.find()) {
      throw new IllegalStateException("the node's metrics have no relay_buffer_faults_total");
    }
    return Double.parseDouble(m.group(1));
  }

  private void deny(Topic topic) {
    Instant until = Instant.now().plusSeconds(3600);
    relay.denyOrAllow(true, topic.booking, until)
        .thenAccept(status -> {
          if (status == 204) {
            denies.increment();
            topic.denied = true;
            topic.deniedAt = System.nanoTime();
            timers.schedule(() -> relay.denyOrAllow(false, topic.booking, until).thenAccept(s -> topic.denied = false), (long) (denyFor * 1000), TimeUnit.MILLISECONDS);
          } else {
            sample("a deny was answered " + status);
          }
        });
  }

  private void sample(String what) {
    if (samples.size() < 20) {
      samples.add(what);
    }
  }

  private void opened(Session socket) {
    synchronized (open) {
      open.add(socket);
    }
  }

  private void closed(Session socket) {
    synchronized (open) {
      open.remove(socket);
    }
  }

  /** Connects with a fresh code, or tries again a little later (a denied booking's codes are refused). */
  private CompletableFuture<Session> connect(Topic topic, String token, Session.Listener listener, Runnable retry) {
    return relay.uri(topic.name, token)
        .thenCompose(uri -> {
          try {
            return sockets.connect(listener, uri);
          } catch (java.io.IOException e) {
            return CompletableFuture.failedFuture(e);
          }
        })
        .whenComplete((socket, e) -> {
          if (e != null) {
            refusals.increment();
            if (!topic.denied) {
              sample("topic " + topic.id + ": a connection was not opened: " + e);
            }
            if (!stopping) {
              timers.schedule(retry, 100, TimeUnit.MILLISECONDS);
            }
          } else {
            opened(socket);
          }
        });
  }

  /** One topic: its id, name, booking and writer. */
  private final class Topic {
    final int id;
    final String name;
    final String booking;
    final Writer writer;
    final String readerToken;
    final List<Reader> readers = new ArrayList<>();
    volatile boolean denied;
    /** Its session has ended: nobody reconnects to it. */
    volatile boolean over;
    /** When its booking was last denied (System.nanoTime), or 0. */
    volatile long deniedAt;

    /** For a sample: how long ago the topic's booking was last denied, if ever. */
    String sinceDeny() {
      long at = deniedAt;
      return at == 0 ? "" : " " + (System.nanoTime() - at) / 1_000_000 + " ms after its booking was denied";
    }

    Topic(int id, String name) {
      this.id = id;
      this.name = name;
      this.booking = name;
      long now = Instant.now().getEpochSecond();
      this.readerToken = relay.token(name, Endpoints.Role.READER, booking, now);
      this.writer = new Writer(this, relay.token(name, Endpoints.Role.WRITER, booking, now));
    }
  }

  /** A topic's writer: sends at the rate while connected, one frame in flight at a time (public for Jetty's method handles). */
  public final class Writer implements Session.Listener.AutoDemanding {
    private final Topic topic;
    private final String token;
    private volatile Session socket;
    private volatile boolean inFlight;
    private double credit;
    private int seq;

    Writer(Topic topic, String token) {
      this.topic = topic;
      this.token = token;
    }

    void connect() {
      if (!stopping && !topic.over) {
        Churn.this.connect(topic, token, this, this::connect);
      }
    }

    /** Ends the session's writer with a normal close. */
    void close() {
      Session session = socket;
      if (session != null) {
        session.close(1000, "", Callback.NOOP);
      }
    }

    @Override
    public void onWebSocketOpen(Session session) {
      socket = session;
    }

    /** Runs every tick on the timer thread: sends what the rate allows, while the last send is done. */
    void tick(double frames) {
      Session session = socket;
      if (session == null || topic.over) {
        return;
      }
      credit = Math.min(credit + frames, 10);
      while (credit >= 1 && !inFlight) {
        credit--;
        int size = ThreadLocalRandom.current().nextInt(minBytes, maxBytes + 1);
        inFlight = true;
        sent.increment();
        session.sendBinary(ChurnFrames.frame(topic.id, seq++, size), Callback.from(() -> inFlight = false, e -> inFlight = false));
      }
    }

    @Override
    public void onWebSocketClose(int statusCode, String reason) {
      ended();
    }

    @Override
    public void onWebSocketError(Throwable cause) {
      ended();
    }

    private void ended() {
      Session session = socket;
      socket = null;
      if (session != null) {
        closed(session);
        if (!stopping && !topic.over) {
          timers.schedule(this::connect, 200, TimeUnit.MILLISECONDS);
        }
      }
    }
  }

  /** A reader: one connection after another, each checked frame by frame. */
  public final class Reader {
    private final Topic topic;
    private volatile Life current;

    Reader(Topic topic) {
      this.topic = topic;
    }

    /** Ends its connection as a reader chooses to, once its session is over. */
    void end() {
      Life life = current;
      Session session = life == null ? null : life.session;
      if (session != null) {
        life.end(session);
      }
    }

    void connect() {
      if (stopping || topic.over) {
        return;
      }
      ThreadLocalRandom random = ThreadLocalRandom.current();
      boolean isSlow = random.nextDouble() < slow;
      Life life = new Life(isSlow);
      current = life;
      Churn.this.connect(topic, topic.readerToken, life, this::connect)
          .thenAccept(socket -> {
            readerConnections.increment();
            long readsMs = random.nextLong(minLifeMs, maxLifeMs + 1L);
            if (isSlow) {
              timers.schedule(() -> life.slowFrom = true, readsMs, TimeUnit.MILLISECONDS);
              timers.schedule(life::readAgain, readsMs + slowMs, TimeUnit.MILLISECONDS);
            }
            timers.schedule(() -> life.end(socket), isSlow ? 2 * readsMs + slowMs : readsMs, TimeUnit.MILLISECONDS);
          });
    }

    /** One connection of the reader; it asks for each message only once it has checked the last (public for Jetty). */
    public final class Life implements Session.Listener {
      private final boolean slowReader;
      private volatile boolean slowFrom;
      private volatile boolean over;
      private final byte[] message = new byte[maxBytes];
      private int lastSeq = -1;
      private volatile Session session;

      Life(boolean slowReader) {
        this.slowReader = slowReader;
      }

      @Override
      public void onWebSocketOpen(Session opened) {
        session = opened;
        if (topic.over) {
          end(opened);
          return;
        }
        opened.demand();
      }

      /** A slow reader reads again after its pause: what the node dropped meanwhile shows as gaps. */
      void readAgain() {
        slowFrom = false;
        if (!over) {
          session.demand();
        }
      }

      /** Ends the connection as the reader chose, and starts the next one at once. */
      synchronized void end(Session socket) {
        if (over) {
          return;
        }
        over = true;
        if (ThreadLocalRandom.current().nextDouble() < abrupt) {
          abruptCloses.increment();
          socket.disconnect();
        } else {
          socket.close(1000, "", Callback.NOOP);
        }
        closed(socket);
        connect();
      }

      @Override
      public void onWebSocketBinary(ByteBuffer payload, Callback callback) {
        int length = payload.remaining();
        payload.get(message, 0, length);
        callback.succeed();
        check(length);
        if (!slowFrom && !over) {
          session.demand();
        }
      }

      @Override
      public void onWebSocketText(String text) {
        corrupt.increment();
        sample("topic " + topic.id + ": a text message");
      }

      private void check(int length) {
        received.increment();
        receivedBytes.add(length);
        ByteBuffer head = ByteBuffer.wrap(message, 0, length);
        int seq = length >= ChurnFrames.HEAD ? head.getInt(0) : -1;
        int from = length >= ChurnFrames.HEAD ? head.getInt(4) : -1;
        if (from == topic.id && ChurnFrames.intact(message, length, topic.id, seq)) {
          if (lastSeq >= 0 && seq <= lastSeq) {
            reordered.increment();
            sample("topic " + topic.id + ": frame " + seq + " after " + lastSeq);
          } else if (lastSeq >= 0 && seq > lastSeq + 1) {
            if (slowReader) {
              slowDropped.add(seq - lastSeq - 1L);
            } else {
              gaps.add(seq - lastSeq - 1L);
              sample("topic " + topic.id + ": frames " + (lastSeq + 1) + " to " + (seq - 1) + " missing");
            }
          }
          lastSeq = seq;
        } else if (from >= 0 && from < topicIds.get() && from != topic.id && ChurnFrames.intact(message, length, from, seq)) {
          foreign.increment();
          sample("topic " + topic.id + ": frame " + seq + " of topic " + from);
        } else {
          corrupt.increment();
          sample("topic " + topic.id + ": " + length + " bytes that are no writer's frame (head " + seq + "/" + from + ", " + ChurnFrames.difference(message, length, topic.id, seq) + ")");
        }
      }

      @Override
      public void onWebSocketClose(int statusCode, String reason) {
        serverEnded(statusCode);
      }

      @Override
      public void onWebSocketError(Throwable cause) {
        if (!over && !stopping) {
          readerErrors.increment();
          sample("topic " + topic.id + ": a reader's connection failed" + topic.sinceDeny() + ": " + cause);
        }
        serverEnded(-1);
      }

      /** The connection ended without the reader ending it: a deny's 4003, or a failure. */
      private synchronized void serverEnded(int code) {
        if (session != null) {
          closed(session);
        }
        if (over) {
          return;
        }
        over = true;
        if (code == 4003) {
          deniedCloses.increment();
        } else if (!stopping && code != -1) {
          sample("topic " + topic.id + ": a reader's connection ended with " + code + topic.sinceDeny());
        }
        if (!stopping && !topic.over) {
          timers.schedule(Reader.this::connect, 100, TimeUnit.MILLISECONDS);
        }
      }
    }
  }
}
