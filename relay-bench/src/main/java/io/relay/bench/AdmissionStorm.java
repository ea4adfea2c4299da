package io.relay.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * W6, the connect storm: what every client of a failed node does at once. Each participant is a
 * fresh TCP connection for {@code POST /session/{topic}} ({@code Connection: close}) and then a
 * fresh one for the WebSocket upgrade to the URI it was given; the upgraded connections stay open
 * until the storm is over, as reconnected clients do. Topics have one writer and two readers.
 *
 * <p>Closed loop ({@code rate} 0): {@code concurrency} clients admit participants back to back, as
 * fast as the server lets them. Open loop: participants are started at {@code rate} per second
 * (at most {@code concurrency} at once); each latency counts from the moment its participant was
 * due, so a server that falls behind is charged for the wait. Access requests go round-robin over
 * the given access URLs (the nodes of a cluster); the upgrade goes where the returned URI points
 * (the node itself, or the ingress that hashes the topic onto a node).
 */
final class AdmissionStorm {
  private static final int TIMEOUT_MILLIS = 30_000;
  private static final Pattern URI_FIELD = Pattern.compile("\"uri\"\\s*:\\s*\"([^\"]+)\"");
  private static final int PARTICIPANTS_PER_TOPIC = 3;

  private final List<URI> access;
  private final Endpoints.Relay tokens;
  private final String runId;
  /** When the storm's tokens are issued (seconds since the epoch). */
  private final long issuedAt;
  private final LatencyHistogram post = new LatencyHistogram();
  private final LatencyHistogram upgrade = new LatencyHistogram();
  private final LatencyHistogram admission = new LatencyHistogram();
  private final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
  private final List<Socket> admitted = new ArrayList<>();

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

  Map<String, Object> run(int participants, int concurrency, double rate, ServerProbe probe) throws InterruptedException {
    String[] writerTokens = new String[(participants + PARTICIPANTS_PER_TOPIC - 1) / PARTICIPANTS_PER_TOPIC];
    String[] readerTokens = new String[writerTokens.length];
    for (int t = 0; t < writerTokens.length; t++) {
      writerTokens[t] = tokens.token(topic(t), Endpoints.Role.WRITER, issuedAt);
      readerTokens[t] = tokens.token(topic(t), Endpoints.Role.READER, issuedAt);
    }
    AtomicInteger next = new AtomicInteger();
    AtomicLong lastDone = new AtomicLong();
    ExecutorService clients = Executors.newFixedThreadPool(concurrency);
    double cpu0 = probe.cpuSeconds();
    double self0 = ServerProbe.selfCpuSeconds();
    long t0 = System.nanoTime();
    for (int c = 0; c < concurrency; c++) {
      clients.execute(
          () -> {
            LatencyHistogram myPost = new LatencyHistogram();
            LatencyHistogram myUpgrade = new LatencyHistogram();
            LatencyHistogram myAdmission = new LatencyHistogram();
            for (int i = next.getAndIncrement(); i < participants; i = next.getAndIncrement()) {
              long due = rate > 0 ? t0 + (long) (i * 1e9 / rate) : System.nanoTime();
              waitUntil(due);
              int t = i / PARTICIPANTS_PER_TOPIC;
              String token = i % PARTICIPANTS_PER_TOPIC == 0 ? writerTokens[t] : readerTokens[t];
              try {
                URI uri = post(access.get(i % access.size()), topic(t), token);
                long posted = System.nanoTime();
                myPost.record(posted - due);
                Socket socket = upgrade(uri);
                long done = System.nanoTime();
                myUpgrade.record(done - posted);
                myAdmission.record(done - due);
                lastDone.accumulateAndGet(done, Math::max);
                synchronized (admitted) {
                  admitted.add(socket);
                }
              } catch (Refused e) {
                failures.computeIfAbsent(e.getMessage(), k -> new AtomicInteger()).incrementAndGet();
              } catch (IOException e) {
                failures.computeIfAbsent(e.getClass().getSimpleName(), k -> new AtomicInteger()).incrementAndGet();
              }
            }
            synchronized (this) {
              post.add(myPost);
              upgrade.add(myUpgrade);
              admission.add(myAdmission);
            }
          });
    }
    clients.shutdown();
    long limit = participants * 2L + 60;
    if (!clients.awaitTermination(limit, TimeUnit.SECONDS)) {
      clients.shutdownNow();
      throw new IllegalStateException("the storm did not end within " + limit + " s");
    }
    double seconds = (Math.max(lastDone.get(), t0) - t0) / 1e9;
    double cpu = probe.cpuSeconds() - cpu0;
    double self = ServerProbe.selfCpuSeconds() - self0;
    closeAdmitted();
    synchronized (this) {
      long count = admission.count();
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("participants", participants);
      r.put("concurrency", concurrency);
      r.put("offeredPerS", rate);
      r.put("accessUrls", access.size());
      r.put("admitted", count);
      Map<String, Integer> failed = new TreeMap<>();
      failures.forEach((k, v) -> failed.put(k, v.get()));
      r.put("failures", failed);
      r.put("seconds", BenchRun.round(seconds, 2));
      r.put("admittedPerS", BenchRun.round(count / Math.max(seconds, 1e-9), 1));
      r.put("postP50Ms", BenchRun.ms(post.quantile(0.5)));
      r.put("postP99Ms", BenchRun.ms(post.quantile(0.99)));
      r.put("upgradeP50Ms", BenchRun.ms(upgrade.quantile(0.5)));
      r.put("upgradeP99Ms", BenchRun.ms(upgrade.quantile(0.99)));
      r.put("admissionP50Ms", BenchRun.ms(admission.quantile(0.5)));
      r.put("admissionP99Ms", BenchRun.ms(admission.quantile(0.99)));
      r.put("admissionMaxMs", BenchRun.ms(admission.max()));
      r.put("serverCpuSeconds", BenchRun.round(cpu, 2));
      r.put("serverCpuMsPerAdmission", count == 0 ? -1 : BenchRun.round(1000 * cpu / count, 3));
      r.put("generatorCpuMsPerAdmission", count == 0 ? -1 : BenchRun.round(1000 * self / count, 3));
      return r;
    }
  }

  private void closeAdmitted() {
    synchronized (admitted) {
      admitted.forEach(AdmissionStorm::closeQuietly);
    }
  }

  private String topic(int t) {
    return "storm-" + runId + "-" + t;
  }

  /** A fresh connection for POST /session/{topic}; the relay URI from the answer. */
  private static URI post(URI access, String topic, String token) throws IOException {
    try (Socket socket = open(access.getHost(), access.getPort())) {
      String request =
          "POST /session/" + topic + " HTTP/1.1\r\nHost: " + access.getHost() + ":" + access.getPort()
              + "\r\nAuthorization: " + token + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      int status = status(response);
      Matcher m = URI_FIELD.matcher(response);
      if (status != 200 || !m.find()) {
        throw new Refused("POST " + status);
      }
      return URI.create(m.group(1));
    }
  }

  /** A fresh connection upgraded to a WebSocket; kept open. */
  private static Socket upgrade(URI uri) throws IOException {
    Socket socket = open(uri.getHost(), uri.getPort());
    try {
      byte[] key = new byte[16];
      ThreadLocalRandom.current().nextBytes(key);
      String request =
          "GET " + uri.getRawPath() + "?" + uri.getRawQuery() + " HTTP/1.1\r\nHost: " + uri.getHost() + ":" + uri.getPort()
              + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
              + Base64.getEncoder().encodeToString(key) + "\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
      int status = status(head(socket.getInputStream()));
      if (status != 101) {
        throw new Refused("upgrade " + status);
      }
      return socket;
    } catch (IOException | RuntimeException e) {
      closeQuietly(socket);
      throw e;
    }
  }

  private static Socket open(String host, int port) throws IOException {
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.setSoTimeout(TIMEOUT_MILLIS);
      socket.connect(new InetSocketAddress(host, port), TIMEOUT_MILLIS);
      return socket;
    } catch (IOException e) {
      closeQuietly(socket);
      throw e;
    }
  }

  /** The response head, up to and including the blank line. */
  private static String head(InputStream in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      bytes.write(b);
      matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
    }
    return bytes.toString(StandardCharsets.ISO_8859_1);
  }

  private static int status(String response) {
    if (response.length() < 12 || !response.startsWith("HTTP/1.1 ")) {
      return -1;
    }
    try {
      return Integer.parseInt(response.substring(9, 12));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static void waitUntil(long due) {
    long wait;
    while ((wait = due - System.nanoTime()) > 0) {
      try {
        TimeUnit.NANOSECONDS.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing a connection the storm is done with
    }
  }

  /** A request the server answered with something other than success: counted by its status. */
  private static final class Refused extends IOException {
    Refused(String what) {
      super(what);
    }
  }
}
