package io.relay.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Reads validated settings from HOCON, failing with one line that names the key and its
 * environment variable.
 */
public final class SettingsReader {
  /** Go's strconv.ParseBool's spellings, in which the practable relay reads its switches. */
  private static final Set<String> GO_TRUE = Set.of("1", "t", "T", "TRUE", "true", "True");
  private static final Set<String> GO_FALSE = Set.of("0", "f", "F", "FALSE", "false", "False");
  /** HOCON's spellings, for this relay's own switches. */
  private static final Set<String> HOCON_TRUE = Set.of("true", "on", "yes");
  private static final Set<String> HOCON_FALSE = Set.of("false", "off", "no");

  private final Config config;

  public SettingsReader(Config config) {
    this.config = config;
  }

  /** The environment variable that overrides a {@code relay.*} key. */
  public static String envVar(String key) {
    return key.replace('.', '_').replace('-', '_').toUpperCase(Locale.ROOT);
  }

  public String string(String key) {
    return read(key, "a string", () -> config.getString(key));
  }

  /** A string that is not blank. */
  public String nonBlank(String key) {
    String value = string(key);
    if (value.isBlank()) {
      throw invalid(key, "expected a value, got nothing");
    }
    return value;
  }

  /**
   * A switch of this relay's own: HOCON's spellings ({@code on}, {@code yes}, {@code true} and
   * their false counterparts) or Go's ({@link #practableBool}).
   */
  public boolean bool(String key) {
    String value = read(key, "true or false", () -> config.getString(key));
    Optional<Boolean> hocon = HOCON_TRUE.contains(value) ? Optional.of(true) : HOCON_FALSE.contains(value) ? Optional.of(false) : Optional.empty();
    return parseGoBool(value).or(() -> hocon).orElseThrow(() -> invalid(key, "expected on, off, true or false, got '" + value + "'"));
  }

  /**
   * A switch the practable relay shares, read as it reads it: Go's spellings of true and false
   * only, since practable reads any other value, {@code yes} and {@code on} among them, as false.
   */
  public boolean practableBool(String key) {
    String value = read(key, "true or false", () -> config.getString(key));
    return parseGoBool(value).orElseThrow(() -> invalid(key, "expected true or false (or 1, t, T, TRUE, True and their false counterparts), got '" + value + "'"));
  }

  /** {@code value} as Go's strconv.ParseBool reads it; empty where it refuses it. */
  public static Optional<Boolean> parseGoBool(String value) {
    return GO_TRUE.contains(value) ? Optional.of(true) : GO_FALSE.contains(value) ? Optional.of(false) : Optional.empty();
  }

  /** An integer in [min, max]. */
  public int integer(String key, int min, int max) {
    int value = read(key, "an integer", () -> config.getInt(key));
    if (value < min || value > max) {
      throw invalid(key, "expected an integer from " + min + " to " + max + ", got " + value);
    }
    return value;
  }

  /** A TCP port, 0 meaning any free port. */
  public int port(String key) {
    return integer(key, 0, 65535);
  }

  /** A positive byte size, as a count or in HOCON's form (16MiB). */
  public long bytes(String key) {
    long value = read(key, "a size such as 65536 or 16MiB", () -> config.getBytes(key));
    if (value <= 0) {
      throw invalid(key, "expected a positive size, got " + value);
    }
    return value;
  }

  /** A byte size in [min, max], as a count or in HOCON's form. */
  public long bytes(String key, long min, long max) {
    long value = bytes(key);
    if (value < min || value > max) {
      throw invalid(key, "expected a size from " + min + " to " + max + " bytes, got " + value);
    }
    return value;
  }

  /** A duration of at least a millisecond, in HOCON's form (30s, 500ms). */
  public Duration duration(String key) {
    Duration value = read(key, "a duration such as 30s or 500ms", () -> config.getDuration(key));
    if (value.compareTo(Duration.ofMillis(1)) < 0) {
      throw invalid(key, "expected a duration of at least 1ms, got " + value);
    }
    return value;
  }

  /** A duration in whole seconds, {@code 0s} included, in HOCON's form (5s, 0s). */
  public Duration wholeSeconds(String key) {
    Duration value = read(key, "a duration such as 5s or 0s", () -> config.getDuration(key));
    if (value.isNegative() || value.getNano() != 0) {
      throw invalid(key, "expected whole seconds, 0s or more, got " + value);
    }
    return value;
  }

  private <T> T read(String key, String expected, Supplier<T> getter) {
    try {
      return getter.get();
    } catch (ConfigException.Missing e) {
      throw invalid(key, "is missing");
    } catch (ConfigException e) {
      String given = config.hasPath(key) ? config.getValue(key).unwrapped().toString() : "nothing";
      throw invalid(key, "expected " + expected + ", got '" + given + "'");
    }
  }

  /** An error naming the key and its environment variable. */
  public static InvalidSettingException invalid(String key, String problem) {
    return new InvalidSettingException(key + " (" + envVar(key) + "): " + problem);
  }

  /** A setting that stops the node at startup; its message is the one line to print. */
  public static final class InvalidSettingException extends RuntimeException {
    public InvalidSettingException(String message) {
      super(message);
    }
  }
}
