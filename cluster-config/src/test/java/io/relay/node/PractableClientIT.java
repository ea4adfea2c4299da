package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * practable's own client stack against a node: a Go program on gorilla/websocket, the library
 * practable's Go clients (their reconws package) dial with, asks the access API for a code as they
 * do (the token raw in Authorization), dials the relay URI it gets and relays text and binary
 * messages; a deny's close code reaches it as gorilla reports a close. The program
 * ({@code src/test/go/practable-client}) is built by the test against Debian's Go and gorilla
 * packages.
 */
class PractableClientIT {
  private static final Path SOURCE = Path.of("src", "test", "go", "practable-client", "main.go");
  private static final Path BUILD = Path.of("target", "practable-client");
  private static final Path GOPATH = Path.of("/usr/share/gocode");
  private static final Duration BUILD_DEADLINE = Duration.ofMinutes(2);
  private static final Duration WAIT = Duration.ofSeconds(10);

  private static Path program;
  private static TestNode node;
  private static AccessClient access;

  @BeforeAll
  static void start() throws Exception {
    program = build();
    node = TestNode.start(Map.of());
    access = new AccessClient(node);
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
  }

  /** Builds the client with Debian's Go against Debian's gorilla/websocket (GOPATH mode: no module download). */
  private static Path build() throws IOException, InterruptedException {
    if (!Files.isDirectory(GOPATH.resolve("src/github.com/gorilla/websocket"))) {
      throw new AssertionError("this test needs Go and gorilla/websocket: apt-get install golang-go golang-github-gorilla-websocket-dev");
    }
    Files.createDirectories(BUILD);
    Path binary = BUILD.resolve("practable-client").toAbsolutePath();
    ProcessBuilder go = new ProcessBuilder("go", "build", "-o", binary.toString(), SOURCE.toAbsolutePath().toString());
    go.environment().putAll(Map.of("GO111MODULE", "off", "GOPATH", GOPATH.toString(), "GOCACHE", BUILD.resolve("cache").toAbsolutePath().toString()));
    Path log = BUILD.resolve("build.log");
    go.redirectErrorStream(true).redirectOutput(log.toFile());
    Process build;
    try {
      build = go.start();
    } catch (IOException e) {
      throw new AssertionError("this test needs Go: apt-get install golang-go golang-github-gorilla-websocket-dev", e);
    }
    if (!build.waitFor(BUILD_DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
      build.descendants().forEach(ProcessHandle::destroyForcibly); // go's compile and link
      build.destroyForcibly();
      build.waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError("go build did not finish within " + BUILD_DEADLINE + ": " + Files.readString(log));
    }
    assertEquals(0, build.exitValue(), "go build failed: " + Files.readString(log));
    return binary;
  }

  @Test
  void practablesGoClientRelaysTextAndBinaryAndHearsADenysCloseCode() throws Exception {
    String topic = "lab/gorilla";
    long exp = Instant.now().plusSeconds(3600).getEpochSecond();
    try (GoClient reader = GoClient.connect(topic, Tokens.booked(topic, "booking-reader", "read"));
        GoClient writer = GoClient.connect(topic, Tokens.booked(topic, "booking-writer", "read", "write"))) {
      writer.send("text hello from gorilla");
      assertEquals("text hello from gorilla", reader.next(), "the writer's text message");
      writer.send("binary 00ff7f80");
      assertEquals("binary 00ff7f80", reader.next(), "the writer's binary message, byte for byte");
      String large = "x".repeat(200_000);
      writer.send("text " + large);
      assertEquals("text " + large, reader.next(), "a message of 200,000 bytes, whole");
      double refused = node.metric("relay_frames_refused_total");
      reader.send("text from a reader without write");
      Await.until("the read-only client's message to be counted as refused", WAIT, () -> node.metric("relay_frames_refused_total") > refused);
      assertNull(writer.nextWithin(Duration.ofMillis(300)), "a message from a connection without write reaches no one");

      assertEquals(204, access.post("/bids/deny?bid=booking-writer&exp=" + exp, Tokens.admin("relay:admin")).status());
      assertEquals("closed 4003", writer.next(), "gorilla reports the deny's close code");
      try (GoClient next = GoClient.connect(topic, Tokens.booked(topic, "booking-next", "read", "write"))) {
        next.send("text after the deny");
        assertEquals("text after the deny", reader.next(), "the other booking's reader stays connected and relayed to");
      }
    }
  }

  /** One run of the Go client: its lines out, and commands in. */
  private static final class GoClient implements AutoCloseable {
    private final Process process;
    private final Writer commands;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    private GoClient(Process process) {
      this.process = process;
      this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
      Thread reading =
          new Thread(
              () -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                  for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                  }
                } catch (IOException e) {
                  lines.add("error reading the client's output: " + e);
                }
              },
              "practable-client-" + process.pid());
      reading.setDaemon(true);
      reading.start();
    }

    /** Starts a client of {@code topic} with {@code token} (in its environment) and waits until it has connected. */
    static GoClient connect(String topic, String token) throws IOException, InterruptedException {
      ProcessBuilder builder = new ProcessBuilder(program.toString(), "http://127.0.0.1:" + node.accessPort, topic);
      builder.environment().put("RELAY_CLIENT_TOKEN", token);
      builder.redirectError(ProcessBuilder.Redirect.INHERIT);
      GoClient client = new GoClient(builder.start());
      try {
        assertEquals("connected", client.next(), "the client got a code and connected");
      } catch (AssertionError | InterruptedException e) {
        client.end();
        throw e;
      }
      return client;
    }

    void send(String command) throws IOException {
      commands.write(command + "\n");
      commands.flush();
    }

    String next() throws InterruptedException {
      String line = nextWithin(WAIT);
      assertNotNull(line, "the client printed nothing within " + WAIT);
      assertFalse(line.startsWith("error"), line);
      return line;
    }

    String nextWithin(Duration wait) throws InterruptedException {
      return lines.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
      try {
        commands.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } finally {
        end();
      }
    }

    private void end() {
      process.destroy();
      try {
        if (!process.waitFor(5, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
