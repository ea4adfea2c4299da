package io.relay.node;

import io.relay.client.ReconnectingClient;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code relay connect}: joins a topic like a real client (code, connect, reconnect with backoff),
 * prints what it receives and sends each line of standard input as a text frame.
 */
@Command(name = "connect", mixinStandardHelpOptions = true, description = "Join a topic: print received frames, send stdin lines.")
final class ConnectCommand implements Callable<Integer> {
  @Option(names = "--access", defaultValue = "http://127.0.0.1:3000", description = "Access API base URL (default: ${DEFAULT-VALUE}).")
  URI access;

  @Option(names = "--topic", required = true, description = "Topic to join.")
  String topic;

  @Option(names = "--token", defaultValue = "${env:RELAY_TOKEN}", description = "Session token (default: RELAY_TOKEN).")
  String token;

  @Override
  public Integer call() throws Exception {
    if (token == null || token.isEmpty()) {
      System.err.println("relay connect: give a token with --token or RELAY_TOKEN");
      return RelayCli.BAD_CONFIGURATION;
    }
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    ReconnectingClient.Options options =
        new ReconnectingClient.Options(access, topic, token, Duration.ofMillis(250), Duration.ofSeconds(10), null);
    try (ReconnectingClient client =
        new ReconnectingClient(HttpClient.newHttpClient(), scheduler, options, new Printer())) {
      client.start();
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line;
      while ((line = stdin.readLine()) != null && !client.isStopped()) {
        if (!client.sendText(line)) {
          System.err.println("(not connected; line dropped)");
        }
      }
    } finally {
      scheduler.shutdownNow();
    }
    return 0;
  }

  private static final class Printer implements ReconnectingClient.Listener {
    @Override
    public void onOpen(int attempt) {
      System.err.println("(connected, attempt " + attempt + ")");
    }

    @Override
    public void onMessage(boolean text, byte[] data) {
      System.out.println(text ? new String(data, StandardCharsets.UTF_8) : "(binary, " + data.length + " bytes)");
    }

    @Override
    public void onClose(int code, String reason) {
      System.err.println("(closed " + code + " " + reason + ")");
    }

    @Override
    public void onRefused(int status, String detail) {
      System.err.println("(refused " + status + ")");
    }
  }
}
