package io.relay.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * W6, the connect storm: what every client of a failed node does at once. Each participant is a
 * fresh TCP connection for {@code POST /session/{topic}} ({@code Connection: close}) and then a
 * fresh one for the WebSocket upgrade to the URI it was given; the upgraded connections stay open
 * until the storm is over, as reconnected clients do. Topics have one writer and two readers.
 *
 * <p>One thread drives every participant over non-blocking sockets (a selector and a state
 * machine per participant), so the generator's own cost per admission is a few system calls and
 * two small parses: it shares the machine's cores with the server.
 *
 * <p>Closed loop ({@code rate} 0): {@code concurrency} participants are being admitted at any
 * time, each started as another finishes, as fast as the server lets them. Open loop:
 * participants are started at {@code rate} per second (at most {@code concurrency} at once); each
 * latency counts from the moment its participant was due, so a server that falls behind is
 * charged for the wait. Access requests go round-robin over the given access URLs (the nodes of a
 * cluster); the upgrade goes where the returned URI points (the node itself, or the ingress that
 * hashes the topic onto a node).
 *
 * <p>The storm's loop, its participants and its report share the histograms and failure counts of
 * one storm, on one thread; reading a response head is {@link ResponseHead}'s.
 */
final class AdmissionStorm {
  private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);
  private static final Pattern URI_FIELD = Pattern.compile("\"uri\"\\s*:\\s*\"([^\"]+)\"");
  private static final int PARTICIPANTS_PER_TOPIC = 3;
  /**
   * After a storm its connections are closed and the storm waits until the server uses less than
   * this much CPU (in cores), so that the next storm meets a server that is done with the last one's
   * closes, as a failed node's clients meet a cluster that was serving its usual load.
   */
  static final double QUIET_CORES = 0.15;
  private static final double SETTLE_DEADLINE_SECONDS = 20;

  private final List<URI> access;
  private final Endpoints.Relay tokens;
  private final String runId;
  /** When the storm's tokens are issued (seconds since the epoch). */
  private final long issuedAt;
  private final LatencyHistogram post = new LatencyHistogram();
  private final LatencyHistogram upgrade = new LatencyHistogram();
  private final LatencyHistogram admission = new LatencyHistogram();
  private final Map<String, Integer> failures = new TreeMap<>();
  private final List<SocketChannel> admitted = new ArrayList<>();
  private final Set<Participant> inFlight = new HashSet<>();
  private String[] writerTokens;
  private String[] readerTokens;
  private long lastDone;

  /**
   * One storm: access requests round-robin over {@code access}, tokens minted by {@code tokens}.
   *
   * @param stormId when the storm was first run (seconds since the epoch): names its topics and is
   *     when its tokens are issued, so that storms of the same id are the same participants coming
   *     back with the same tokens; null for a new storm
   */
  AdmissionStorm(List<URI> access, Endpoints.Relay tokens, Long stormId) {
    this.access = access;
    this.tokens = tokens;
    this.issuedAt = stormId != null ? stormId : System.currentTimeMillis() / 1000;
    this.runId = Long.toString(issuedAt % 100_000_000L, 36);
  }

  Map<String, Object> run(int participants, int concurrency, double rate, ServerProbe probe) throws IOException, InterruptedException {
    writerTokens = new String[(participants + PARTICIPANTS_PER_TOPIC - 1) / PARTICIPANTS_PER_TOPIC];
    readerTokens = new String[writerTokens.length];
    for (int t = 0; t < writerTokens.length; t++) {
      writerTokens[t] = tokens.token(topic(t), Endpoints.Role.WRITER, issuedAt);
      readerTokens[t] = tokens.token(topic(t), Endpoints.Role.READER, issuedAt);
    }
    double cpu0 = probe.cpuSeconds();
    double self0 = ServerProbe.selfCpuSeconds();
    long t0 = System.nanoTime();
    long limit = t0 + TimeUnit.SECONDS.toNanos(participants * 2L + 60);
    try (Selector selector = Selector.open()) {
      int started = 0;
      long lastSweep = t0;
      while (started < participants || !inFlight.isEmpty()) {
        long now = System.nanoTime();
        if (now > limit) {
          throw new IllegalStateException("the storm did not end within " + TimeUnit.NANOSECONDS.toSeconds(limit - t0) + " s");
        }
        while (started < participants && inFlight.size() < concurrency) {
          long due = rate > 0 ? t0 + (long) (started * 1e9 / rate) : now;
          if (due > now) {
            break;
          }
          start(selector, started++, due);
        }
        long wait = 100;
        if (rate > 0 && started < participants && inFlight.size() < concurrency) {
          wait = Math.max(1, TimeUnit.NANOSECONDS.toMillis(t0 + (long) (started * 1e9 / rate) - System.nanoTime()));
        }
        selector.select(key -> ((Participant) key.attachment()).onReady(key), wait);
        if (now - lastSweep > TimeUnit.SECONDS.toNanos(1)) {
          lastSweep = now;
          for (Participant p : new ArrayList<>(inFlight)) {
            if (now - p.due > TIMEOUT_NANOS) {
              p.fail("timeout");
            }
          }
        }
      }
    }
    double seconds = (Math.max(lastDone, t0) - t0) / 1e9;
    double cpu = probe.cpuSeconds() - cpu0;
    double self = ServerProbe.selfCpuSeconds() - self0;
    admitted.forEach(AdmissionStorm::closeQuietly);
    double settle = probe.awaitQuiet(QUIET_CORES, SETTLE_DEADLINE_SECONDS);
    long count = admission.count();
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("participants", participants);
    r.put("concurrency", concurrency);
    r.put("offeredPerS", rate);
    r.put("accessUrls", access.size());
    r.put("admitted", count);
    r.put("failures", failures);
    r.put("seconds", BenchRun.round(seconds, 2));
    r.put("admittedPerS", BenchRun.round(count / Math.max(seconds, 1e-9), 1));
    r.put("postP50Ms", BenchRun.ms(post.quantile(0.5)));
    r.put("postP99Ms", BenchRun.ms(post.quantile(0.99)));
    r.put("upgradeP50Ms", BenchRun.ms(upgrade.quantile(0.5)));
    r.put("upgradeP99Ms", BenchRun.ms(upgrade.quantile(0.99)));
    r.put("admissionP50Ms", BenchRun.ms(admission.quantile(0.5)));
    r.put("admissionP99Ms", BenchRun.ms(admission.quantile(0.99)));
    r.put("admissionMaxMs", BenchRun.ms(admission.max()));
    r.put("settleSeconds", BenchRun.round(settle, 2));
    r.put("serverCpuSeconds", BenchRun.round(cpu, 2));
    r.put("serverCpuMsPerAdmission", count == 0 ? -1 : BenchRun.round(1000 * cpu / count, 3));
    r.put("generatorCpuMsPerAdmission", count == 0 ? -1 : BenchRun.round(1000 * self / count, 3));
    return r;
  }

  private void start(Selector selector, int i, long due) {
    int t = i / PARTICIPANTS_PER_TOPIC;
    String token = i % PARTICIPANTS_PER_TOPIC == 0 ? writerTokens[t] : readerTokens[t];
    URI target = access.get(i % access.size());
    String request =
        "POST /session/" + topic(t) + " HTTP/1.1\r\nHost: " + target.getHost() + ":" + target.getPort()
            + "\r\nAuthorization: " + token + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    Participant p = new Participant(selector, due);
    inFlight.add(p);
    p.open(target, request, Phase.POST);
  }

  private String topic(int t) {
    return "storm-" + runId + "-" + t;
  }

  private enum Phase {
    POST,
    UPGRADE
  }

  /** One participant: its POST's connection, then its upgrade's, each connected, written and read without blocking. */
  private final class Participant {
    private final Selector selector;
    final long due;
    private long posted;
    private Phase phase;
    private SocketChannel channel;
    private ByteBuffer out;
    private ByteBuffer in = ByteBuffer.allocate(1024);

    Participant(Selector selector, long due) {
      this.selector = selector;
      this.due = due;
    }

    void open(URI target, String request, Phase next) {
      phase = next;
      out = ByteBuffer.wrap(request.getBytes(StandardCharsets.US_ASCII));
      in.clear();
      try {
        channel = SocketChannel.open();
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        if (channel.connect(new InetSocketAddress(target.getHost(), target.getPort()))) {
          channel.register(selector, 0, this);
          write();
        } else {
          channel.register(selector, SelectionKey.OP_CONNECT, this);
        }
      } catch (IOException e) {
        fail(e.getClass().getSimpleName());
      }
    }

    void onReady(SelectionKey key) {
      try {
        if (key.isConnectable()) {
          channel.finishConnect();
          write();
        } else if (key.isWritable()) {
          write();
        } else if (key.isReadable()) {
          read();
        }
      } catch (IOException e) {
        fail(e.getClass().getSimpleName());
      }
    }

    private void write() throws IOException {
      channel.write(out);
      channel.keyFor(selector).interestOps(out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    private void read() throws IOException {
      if (!in.hasRemaining()) {
        in = ByteBuffer.allocate(in.capacity() * 2).put(in.flip());
      }
      int n = channel.read(in);
      int headEnd = ResponseHead.end(in.array(), in.position());
      if (phase == Phase.POST) {
        int length = headEnd < 0 ? -1 : ResponseHead.contentLength(in.array(), headEnd);
        if (headEnd >= 0 && length >= 0 && in.position() >= headEnd + length) {
          posted(headEnd, length);
        } else if (n < 0) {
          fail(headEnd < 0 ? "POST closed" : "POST " + ResponseHead.status(in.array(), in.position()));
        }
      } else if (headEnd >= 0) {
        upgraded();
      } else if (n < 0) {
        fail("upgrade closed");
      }
    }

    private void posted(int headEnd, int length) {
      int status = ResponseHead.status(in.array(), in.position());
      closeQuietly(channel);
      Matcher m = URI_FIELD.matcher(new String(in.array(), headEnd, length, StandardCharsets.UTF_8));
      if (status != 200 || !m.find()) {
        fail("POST " + status);
        return;
      }
      posted = System.nanoTime();
      post.record(posted - due);
      URI uri = URI.create(m.group(1));
      byte[] key = new byte[16];
      ThreadLocalRandom.current().nextBytes(key);
      open(
          uri,
          "GET " + uri.getRawPath() + "?" + uri.getRawQuery() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
              + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
              + Base64.getEncoder().encodeToString(key) + "\r\n\r\n",
          Phase.UPGRADE);
    }

    private void upgraded() {
      int status = ResponseHead.status(in.array(), in.position());
      if (status != 101) {
        fail("upgrade " + status);
        return;
      }
      long done = System.nanoTime();
      upgrade.record(done - posted);
      admission.record(done - due);
      lastDone = Math.max(lastDone, done);
      channel.keyFor(selector).interestOps(0);
      admitted.add(channel);
      inFlight.remove(this);
    }

    void fail(String what) {
      failures.merge(what, 1, Integer::sum);
      closeQuietly(channel);
      inFlight.remove(this);
    }
  }

  private static void closeQuietly(SocketChannel channel) {
    try {
      if (channel != null) {
        channel.close();
      }
    } catch (IOException e) {
      // closing a connection the storm is done with
    }
  }
}
