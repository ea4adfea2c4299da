package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.relay.testing.Await;
import io.relay.testing.Tokens;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A node that reads its secret from a file (RELAY_SECRET_FILE, as a mounted Kubernetes secret)
 * takes a secret rotated on disk without a restart, and accepts the previous secret's tokens while
 * it is named as the previous one; {@code relay token} signs with the same file.
 */
class SecretRotationTest {
  private static final String OLD = "old-secret-0123456789abcdef-0123456789abcdef";
  private static final String NEW = "new-secret-0123456789abcdef-0123456789abcdef";
  private static final Duration WAIT = Duration.ofSeconds(15);
  private final HttpClient http = HttpClient.newHttpClient();

  @TempDir Path dir;

  /** The status of a code request for topic lab, with a token signed with {@code secret}. */
  private int codeRequest(TestNode node, String secret) {
    return codeRequestWith(node, Tokens.sign(Tokens.session("lab", List.of("read"), "b1").build(), secret));
  }

  private int codeRequestWith(TestNode node, String token) {
    try {
      return http.send(
              HttpRequest.newBuilder(node.access("/session/lab")).header("Authorization", token).POST(HttpRequest.BodyPublishers.noBody()).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      throw new AssertionError("the code request failed", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void relayTokenSignsWithTheSecretFile() throws Exception {
    Path secret = Files.writeString(dir.resolve("secret"), NEW + "\n");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = System.out;
    int status;
    try {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      status =
          new CommandLine(new TokenCommand())
              .execute("--secret-file", secret.toString(), "--topic", "lab", "--booking-id", "b1", "--scopes", "read", "--audience", Tokens.AUDIENCE);
    } finally {
      System.setOut(out);
    }
    assertEquals(0, status);
    String token = printed.toString(StandardCharsets.UTF_8).strip();
    try (TestNode node = TestNode.start(Map.of("relay.secret", "", "relay.secret-file", secret.toString()))) {
      assertEquals(200, codeRequestWith(node, token), "the token relay token signed with the file's secret");
    }
  }

  /** Replaces {@code file}'s content in one step, as Kubernetes swaps a mounted secret's files. */
  private void replace(Path file, String secret) throws IOException {
    Path next = Files.writeString(dir.resolve(file.getFileName() + ".next"), secret);
    Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void aSecretRotatedOnDiskIsUsedWithoutARestartAndThePreviousOneUntilItIsDropped() throws IOException {
    Path secret = Files.writeString(dir.resolve("secret"), OLD + "\n");
    Path previous = Files.writeString(dir.resolve("previous"), OLD + "\n");
    try (TestNode node =
        TestNode.start(
            Map.of(
                "relay.secret", "",
                "relay.secret-file", secret.toString(),
                "relay.secret-reload-interval", "200ms"))) {
      assertEquals(200, codeRequest(node, OLD), "the file's secret");
      assertEquals(401, codeRequest(node, NEW));

      replace(secret, NEW);
      Await.until("the node accepts tokens of the secret rotated on disk", WAIT, () -> codeRequest(node, NEW) == 200);
      assertEquals(401, codeRequest(node, OLD), "the old secret, not named as the previous one, is refused");
    }
    // a rotation with the previous secret named: tokens already handed out stay valid meanwhile
    try (TestNode node =
        TestNode.start(
            Map.of(
                "relay.secret", "",
                "relay.secret-file", secret.toString(),
                "relay.secret-previous-file", previous.toString(),
                "relay.secret-reload-interval", "200ms"))) {
      assertEquals(200, codeRequest(node, NEW));
      assertEquals(200, codeRequest(node, OLD), "the previous secret's tokens during the rotation");
      replace(previous, NEW); // the rotation is over: the previous secret is dropped
      Await.until("the node refuses the dropped previous secret's tokens", WAIT, () -> codeRequest(node, OLD) == 401);
      assertEquals(200, codeRequest(node, NEW));
    }
  }
}
