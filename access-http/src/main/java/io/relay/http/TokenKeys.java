package io.relay.http;

import io.relay.config.SettingsReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HS256 keys access tokens are checked against: the current secret and, during a rotation, a
 * previous one, each given as a value ({@code RELAY_SECRET}, {@code RELAY_SECRET_PREVIOUS}) or as
 * a file holding it ({@code RELAY_SECRET_FILE}, {@code RELAY_SECRET_PREVIOUS_FILE}; a Kubernetes
 * secret mounted as a volume). Files are read again at most once per {@code
 * relay.secret-reload-interval}, when a token is checked: a secret changed on disk (Kubernetes
 * updates a mounted secret in place) is used from then on without a restart, and tokens remembered
 * as verified under the keys before are checked again. The current secret's file that cannot be
 * read, or holds nothing, after the start leaves the keys as they were and is logged; at the start
 * it stops the node. The previous secret's file is there only during a rotation: missing or empty,
 * there is no previous secret. Neither secret set is the development mode ({@link
 * HttpSettings#devMode}, {@link HttpSettings#DEV_SECRET}).
 */
public final class TokenKeys {
  private static final Logger LOG = LoggerFactory.getLogger(TokenKeys.class);

  /**
   * Where a secret comes from: a value, or a file (null for none). An optional file (the previous
   * secret's) that is missing or empty means no secret; the current secret's file must hold one.
   */
  private record Source(String setting, String value, Path file, boolean optional) {
    /** Names the setting and the file, never the secret. */
    @Override
    public String toString() {
      return setting + (file != null ? " from " + file : value.isEmpty() ? " (unset)" : " (set)");
    }
  }

  /** The secrets in use, the current first, and how often they changed before. */
  record Keys(List<String> secrets, long version) {
    /** Counts the secrets, never prints them. */
    @Override
    public String toString() {
      return secrets.size() + " secret(s), version " + version;
    }
  }

  private final Source current;
  private final Source previous;
  /** Null when no secret comes from a file: there is nothing to read again. */
  private final ReloadInterval reload;
  private volatile Keys keys;

  private TokenKeys(Source current, Source previous, ReloadInterval reload) {
    this.current = current;
    this.previous = previous;
    this.reload = current.file() != null || previous.file() != null ? reload : null;
    this.keys = new Keys(read(true), 0);
  }

  /** The keys of {@code settings}; throws the settings' error when a secret file cannot be read. */
  public static TokenKeys from(HttpSettings settings) {
    return from(settings, System::nanoTime);
  }

  static TokenKeys from(HttpSettings settings, LongSupplier nanoClock) {
    return new TokenKeys(
        source("relay.secret", settings.secret(), settings.secretFile(), false),
        source("relay.secret-previous", settings.secretPrevious(), settings.secretPreviousFile(), true),
        new ReloadInterval(settings.secretReloadInterval(), nanoClock));
  }

  private static Source source(String setting, String value, String file, boolean optional) {
    if (!value.isEmpty() && !file.isEmpty()) {
      throw SettingsReader.invalid(setting, "set the secret or the file that holds it, not both");
    }
    return new Source(setting, value, file.isEmpty() ? null : Path.of(file), optional);
  }

  /**
   * The keys now, the current first; reads the files again first when the reload interval has
   * passed since they were last read (on one caller's thread, the others going on with the keys
   * they have).
   */
  Keys keys() {
    if (reload != null && reload.due()) {
      List<String> secrets = read(false);
      Keys before = keys;
      if (secrets != null && !secrets.equals(before.secrets())) {
        keys = new Keys(secrets, before.version() + 1);
        LOG.info("access token keys read again from their files: {} in use", secrets.size() == 1 ? "one secret" : "the current and the previous secret");
      }
    }
    return keys;
  }

  /** The secrets, the current first; null when a file could not be read after the start. */
  private List<String> read(boolean atStart) {
    String now = read(current, atStart);
    String before = read(previous, atStart);
    if (now == null || before == null) {
      return null;
    }
    String secret = now.isEmpty() ? HttpSettings.DEV_SECRET : now;
    return before.isEmpty() ? List.of(secret) : List.of(secret, before);
  }

  /** The secret of {@code source}: its value, its file's text without surrounding white space, or "" if unset. */
  private static String read(Source source, boolean atStart) {
    if (source.file() == null) {
      return source.value();
    }
    try {
      if (source.optional() && !Files.exists(source.file())) {
        return ""; // no rotation under way
      }
      String secret = Files.readString(source.file(), StandardCharsets.UTF_8).strip();
      if (secret.isEmpty() && !source.optional()) {
        throw new IOException("the file is empty");
      }
      return secret;
    } catch (IOException e) {
      if (atStart) {
        throw SettingsReader.invalid(source.setting() + "-file", "cannot read the secret from " + source.file() + ": " + e.getMessage());
      }
      LOG.warn("cannot read the secret of {}-file from {} ({}); the keys in use stay as they were", source.setting(), source.file(), e.toString());
      return null;
    }
  }

  /** Where the secrets come from and how many are in use, never a secret. */
  @Override
  public String toString() {
    return "TokenKeys[" + current + ", " + previous + "; " + keys + "]";
  }
}
