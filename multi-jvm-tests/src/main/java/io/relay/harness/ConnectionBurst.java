package io.relay.harness;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A burst of WebSocket connections at one node, as many clients arriving at once would make it:
 * codes are fetched first (from any node's access API), then every connection is opened and
 * upgraded on the node's relay port by a pool of threads, each taking the next code as soon as
 * its last upgrade was answered. The upgraded connections stay open, unread, until closed.
 */
public final class ConnectionBurst implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final Duration UPGRADE_TIMEOUT = Duration.ofSeconds(30);
  private static final int MAX_HEAD = 8192;

  /** How the burst went: upgrades, refusals by status (-1: no answer), first connect to last answer. */
  public record Result(int upgraded, Map<Integer, Integer> refusals, long millis) {
    public double perSecond() {
      return millis == 0 ? 0 : upgraded * 1000.0 / millis;
    }
  }

  private final ConcurrentLinkedQueue<Socket> open = new ConcurrentLinkedQueue<>();

  /**
   * One-time relay targets ({@code /session/{topic}?code=...}) for {@code n} connections,
   * {@code perTopic} to a topic, fetched round-robin from {@code accessUrls} with {@code
   * concurrency} requests at a time; a 503 is asked again after its Retry-After.
   */
  public static List<String> codes(List<String> accessUrls, String prefix, int n, int perTopic, int concurrency, Duration timeout) {
    String[] targets = new String[n];
    AtomicInteger next = new AtomicInteger();
    long deadline = System.nanoTime() + timeout.toNanos();
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < concurrency; w++) {
        workers.add(pool.submit(() -> {
          for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
            String topic = prefix + "/t" + (i / perTopic);
            targets[i] = code(accessUrls.get(i % accessUrls.size()), topic, Tokens.session(topic, "b-" + i, "read", "write"), deadline);
          }
          return null;
        }));
      }
      for (Future<?> worker : workers) {
        worker.get(timeout.toMillis() + 10_000, TimeUnit.MILLISECONDS);
      }
    } catch (Exception e) {
      throw new AssertionError("fetching " + n + " codes: " + e, e);
    } finally {
      pool.shutdownNow();
    }
    return List.of(targets);
  }

  private static String code(String accessUrl, String topic, String token, long deadline) throws IOException, InterruptedException {
    while (true) {
      HttpResponse<String> response =
          HTTP.send(
              HttpRequest.newBuilder(URI.create(accessUrl + "/session/" + topic))
                  .header("Authorization", token)
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.noBody())
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() == 200) {
        URI uri = URI.create(response.body().replaceAll(".*\"uri\":\"([^\"]+)\".*", "$1"));
        return uri.getRawPath() + "?" + uri.getRawQuery();
      }
      if (response.statusCode() != 503 || System.nanoTime() > deadline) {
        throw new AssertionError("no code for " + topic + " from " + accessUrl + ": " + response.statusCode() + " " + response.body());
      }
      long retryAfter = response.headers().firstValueAsLong("Retry-After").orElse(1);
      Await.pause(TimeUnit.SECONDS.toMillis(retryAfter));
    }
  }

  /** Opens a connection per target at {@code relayPort}, {@code concurrency} at a time; blocks until all are answered. */
  public Result open(int relayPort, List<String> targets, int concurrency) {
    AtomicInteger next = new AtomicInteger();
    AtomicInteger upgraded = new AtomicInteger();
    Map<Integer, Integer> refusals = new TreeMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    long start = System.nanoTime();
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < concurrency; w++) {
        workers.add(pool.submit(() -> {
          for (int i = next.getAndIncrement(); i < targets.size(); i = next.getAndIncrement()) {
            int status = upgrade(relayPort, targets.get(i));
            if (status == 101) {
              upgraded.incrementAndGet();
            } else {
              synchronized (refusals) {
                refusals.merge(status, 1, Integer::sum);
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> worker : workers) {
        worker.get(targets.size() * UPGRADE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (Exception e) {
      throw new AssertionError("opening the burst: " + e, e);
    } finally {
      pool.shutdownNow();
    }
    synchronized (refusals) {
      return new Result(upgraded.get(), Map.copyOf(refusals), (System.nanoTime() - start) / 1_000_000);
    }
  }

  /** One WebSocket upgrade; the answer's status (the socket is kept open after a 101), -1 for none. */
  private int upgrade(int port, String target) {
    Socket socket = new Socket();
    try {
      socket.connect(new InetSocketAddress("127.0.0.1", port), (int) UPGRADE_TIMEOUT.toMillis());
      socket.setSoTimeout((int) UPGRADE_TIMEOUT.toMillis());
      byte[] key = new byte[16];
      ThreadLocalRandom.current().nextBytes(key);
      OutputStream out = socket.getOutputStream();
      out.write(("GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Key: " + Base64.getEncoder().encodeToString(key) + "\r\nSec-WebSocket-Version: 13\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      int status = status(socket.getInputStream());
      if (status == 101) {
        open.add(socket);
      } else {
        socket.close();
      }
      return status;
    } catch (IOException e) {
      closeQuietly(socket);
      return -1;
    }
  }

  /** Reads a response head byte by byte (nothing after it); its status. */
  private static int status(InputStream in) throws IOException {
    StringBuilder head = new StringBuilder();
    while (head.length() < MAX_HEAD && !(head.length() >= 4 && head.substring(head.length() - 4).equals("\r\n\r\n"))) {
      int b = in.read();
      if (b < 0) {
        return -1;
      }
      head.append((char) b);
    }
    String[] statusLine = head.toString().split(" ", 3);
    return statusLine.length >= 2 ? Integer.parseInt(statusLine[1]) : -1;
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }

  /** How many upgraded connections are held open. */
  public int held() {
    return open.size();
  }

  /** Closes every connection the burst opened. */
  @Override
  public void close() {
    for (Socket socket = open.poll(); socket != null; socket = open.poll()) {
      closeQuietly(socket);
    }
  }
}
