package io.relay.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.relay.config.SettingsReader;
import io.relay.testing.Tokens;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The keys access tokens are checked against: a secret read from a file and read again when it
 * changes, without a restart, and a previous secret accepted during a rotation.
 */
class TokenKeysTest {
  private static final String OLD = "old-secret-0123456789abcdef-0123456789abcdef";
  private static final String NEW = "new-secret-0123456789abcdef-0123456789abcdef";
  private static final Duration RELOAD = Duration.ofSeconds(10);

  @TempDir Path dir;
  /** The keys' clock, in nanoseconds: the test moves it past the reload interval. */
  private final AtomicLong nanos = new AtomicLong();

  private HttpSettings settings(Map<String, String> secrets) {
    Map<String, Object> config = new HashMap<>(secrets);
    config.put("relay.audience", Tokens.AUDIENCE);
    config.put("relay.secret-reload-interval", RELOAD.toMillis() + "ms");
    return HttpSettings.create(ConfigFactory.parseMap(config).withFallback(ConfigFactory.load()));
  }

  private TokenVerifier verifier(HttpSettings settings, int cacheSize) {
    TokenKeys keys = TokenKeys.from(settings, nanos::get);
    return new TokenVerifier(settings, keys, cacheSize, () -> {}, () -> System.currentTimeMillis() / 1000);
  }

  private static String signedWith(String secret) {
    return Tokens.sign(Tokens.session("lab", List.of("read"), "b1").build(), secret);
  }

  private static boolean accepts(TokenVerifier verifier, String token) {
    try {
      verifier.verify(Optional.of(token));
      return true;
    } catch (ApiException refused) {
      assertEquals(401, refused.status());
      return false;
    }
  }

  private Path file(String name, String secret) throws IOException {
    return Files.writeString(dir.resolve(name), secret + "\n"); // as editors and kubectl write them
  }

  @Test
  void neitherTheSettingsNorTheKeysShowAKey() {
    HttpSettings settings = settings(Map.of("relay.secret", NEW, "relay.secret-previous", OLD));
    TokenKeys keys = TokenKeys.from(settings, nanos::get);
    for (String shown : List.of(settings.toString(), keys.toString(), keys.keys().toString())) {
      assertFalse(shown.contains(NEW) || shown.contains(OLD), "shown as text with a key: " + shown);
    }
    assertTrue(keys.toString().contains("2 secret(s)"), "the keys as text say how many there are: " + keys);
  }

  @Test
  void aSecretFromAFileIsReadAgainOnceTheReloadIntervalHasPassed() throws IOException {
    Path secret = file("secret", OLD);
    TokenVerifier verifier = verifier(settings(Map.of("relay.secret-file", secret.toString())), 100);
    assertTrue(accepts(verifier, signedWith(OLD)), "the file's secret, its newline stripped");
    assertFalse(accepts(verifier, signedWith(NEW)));

    file("secret", NEW); // rotated on disk, as Kubernetes updates a mounted secret
    assertTrue(accepts(verifier, signedWith(OLD)), "not read again before the interval");
    nanos.addAndGet(RELOAD.toNanos());
    assertTrue(accepts(verifier, signedWith(NEW)), "read again after the interval, without a restart");
    assertFalse(accepts(verifier, signedWith(OLD)), "the old secret, not named as the previous one, is refused, cached or not");
  }

  @Test
  void aTokenVerifiedUnderTheOldSecretAsTheKeysChangeIsNotRememberedPastTheChange() throws Exception {
    // Two threads verify fresh tokens of the old secret while the secret is rotated away (not kept
    // as the previous one). A request that began under the old keys and remembered its token after
    // the change emptied the cache must not make that token valid: every token accepted before the
    // change is refused after it, from the cache or not. Twenty rotations, each on a fresh verifier.
    for (int round = 0; round < 20; round++) {
      Path secret = file("secret-" + round, OLD);
      TokenVerifier verifier = verifier(settings(Map.of("relay.secret-file", secret.toString())), 10_000);
      Queue<String> accepted = new ConcurrentLinkedQueue<>();
      AtomicBoolean rotated = new AtomicBoolean();
      CountDownLatch busy = new CountDownLatch(2);
      Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        int id = t;
        int finalRound = round;
        Thread thread = new Thread(() -> {
          for (int i = 0; i < 200_000; i++) {
            String token = Tokens.sign(Tokens.session("lab", List.of("read"), "b-" + finalRound + "-" + id + "-" + i).build(), OLD);
            if (accepts(verifier, token)) {
              accepted.add(token);
            } else if (rotated.get()) {
              return; // the change has been seen: refused under the new keys
            }
            if (i == 50) {
              busy.countDown();
            }
          }
        });
        thread.setUncaughtExceptionHandler((failed, failure) -> failures.add(failure));
        threads.add(thread);
        thread.start();
      }
      assertTrue(busy.await(10, TimeUnit.SECONDS), "both threads were verifying tokens before the rotation");
      file("secret-" + round, NEW);
      nanos.addAndGet(RELOAD.toNanos());
      rotated.set(true);
      for (Thread thread : threads) {
        thread.join(10_000);
        assertFalse(thread.isAlive(), "a verifying thread saw the new secret within 10 s");
      }
      assertEquals(List.of(), List.copyOf(failures), "every refusal in the verifying threads was a 401");
      for (String token : accepted) {
        assertFalse(accepts(verifier, token), "round " + round + ": a token of the rotated-away secret is accepted after the change");
      }
    }
  }

  @Test
  void duringARotationTokensOfThePreviousSecretAreAcceptedToo() throws IOException {
    Path previous = file("previous", OLD);
    TokenVerifier byValue = verifier(settings(Map.of("relay.secret", NEW, "relay.secret-previous", OLD)), 0);
    TokenVerifier byFile =
        verifier(settings(Map.of("relay.secret-file", file("secret", NEW).toString(), "relay.secret-previous-file", previous.toString())), 0);
    for (TokenVerifier verifier : List.of(byValue, byFile)) {
      assertTrue(accepts(verifier, signedWith(NEW)));
      assertTrue(accepts(verifier, signedWith(OLD)), "the previous secret's tokens are still valid");
      assertFalse(accepts(verifier, signedWith("a-third-secret-0123456789abcdef-0123456789")));
    }
    // the rotation ends: the previous secret's file goes (its key is removed from the Secret)
    Files.delete(previous);
    nanos.addAndGet(RELOAD.toNanos());
    assertFalse(accepts(byFile, signedWith(OLD)), "once the previous secret is gone, its tokens are refused");
    assertTrue(accepts(byFile, signedWith(NEW)));
  }

  @Test
  void aPreviousSecretsFileMissingAtTheStartMeansNoRotationIsUnderWay() throws IOException {
    TokenVerifier verifier =
        verifier(settings(Map.of("relay.secret", NEW, "relay.secret-previous-file", dir.resolve("previous").toString())), 0);
    assertTrue(accepts(verifier, signedWith(NEW)));
    assertFalse(accepts(verifier, signedWith(OLD)));
    file("previous", OLD); // a rotation begins: the Secret gets its previous key
    nanos.addAndGet(RELOAD.toNanos());
    assertTrue(accepts(verifier, signedWith(OLD)), "the previous secret, once its file appears");
  }

  @Test
  void aFileThatCannotBeReadAfterTheStartLeavesTheKeysAsTheyWere() throws IOException {
    Path secret = file("secret", OLD);
    TokenVerifier verifier = verifier(settings(Map.of("relay.secret-file", secret.toString())), 0);
    Files.delete(secret); // between the old file's removal and the new one's arrival
    nanos.addAndGet(RELOAD.toNanos());
    assertTrue(accepts(verifier, signedWith(OLD)), "a missing file does not take the key away");
    Files.writeString(secret, "  \n");
    nanos.addAndGet(RELOAD.toNanos());
    assertTrue(accepts(verifier, signedWith(OLD)), "neither does an empty one");
  }

  @Test
  void aSecretFileThatCannotBeReadAtTheStartOrASecretSetTwiceStopsTheNode() throws IOException {
    SettingsReader.InvalidSettingException missing =
        assertThrows(
            SettingsReader.InvalidSettingException.class,
            () -> TokenKeys.from(settings(Map.of("relay.secret-file", dir.resolve("none").toString()))));
    assertTrue(missing.getMessage().contains("RELAY_SECRET_FILE"), missing.getMessage());
    SettingsReader.InvalidSettingException both =
        assertThrows(
            SettingsReader.InvalidSettingException.class,
            () -> TokenKeys.from(settings(Map.of("relay.secret", OLD, "relay.secret-file", file("secret", NEW).toString()))));
    assertTrue(both.getMessage().contains("not both"), both.getMessage());
  }

  @Test
  void withoutASecretOrAFileTheNodeIsInDevelopmentMode() throws IOException {
    HttpSettings none = settings(Map.of());
    assertTrue(none.devMode());
    assertTrue(accepts(verifier(none, 0), signedWith(HttpSettings.DEV_SECRET)));
    HttpSettings fromFile = settings(Map.of("relay.secret-file", file("secret", OLD).toString()));
    assertFalse(fromFile.devMode(), "a secret file is a real secret");
    assertFalse(accepts(verifier(fromFile, 0), signedWith(HttpSettings.DEV_SECRET)), "and the development key is not accepted beside it");
  }
}
