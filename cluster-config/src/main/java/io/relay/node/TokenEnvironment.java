package io.relay.node;

import io.relay.config.SettingsReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The defaults of {@code relay token}'s options from the environment: practable's {@code
 * RELAY_TOKEN_*} variables, read as practable's {@code relay token} reads them, then this relay's
 * {@code RELAY_AUDIENCE}, {@code RELAY_SECRET} and {@code RELAY_SECRET_FILE}. An option given on
 * the command line wins over both. An empty variable counts as unset, as it does for practable.
 *
 * <p>Once any of practable's variables is set, practable's defaults apply to the options none of
 * them sets: booking id {@value #PRACTABLE_BOOKING_ID} and the scopes {@code write,read} (its
 * {@code RELAY_TOKEN_SCOPE_READ} and {@code _WRITE} default to true).
 */
final class TokenEnvironment implements CommandLine.IDefaultValueProvider {
  static final String TOPIC = "RELAY_TOKEN_TOPIC";
  static final String SECRET = "RELAY_TOKEN_SECRET";
  static final String AUDIENCE = "RELAY_TOKEN_AUDIENCE";
  static final String LIFETIME = "RELAY_TOKEN_LIFETIME";
  static final String BOOKING_ID = "RELAY_TOKEN_BOOKING_ID";
  static final String CONNECTION_TYPE = "RELAY_TOKEN_CONNECTION_TYPE";
  static final String SCOPE_ADMIN = "RELAY_TOKEN_SCOPE_ADMIN";
  static final String SCOPE_WRITE = "RELAY_TOKEN_SCOPE_WRITE";
  static final String SCOPE_READ = "RELAY_TOKEN_SCOPE_READ";
  static final String SCOPE_OTHER = "RELAY_TOKEN_SCOPE_OTHER";
  /** Every variable practable's {@code relay token} reads (its cmd/relay/cmd/token.go). */
  static final List<String> PRACTABLE =
      List.of(TOPIC, SECRET, AUDIENCE, LIFETIME, BOOKING_ID, CONNECTION_TYPE, SCOPE_ADMIN, SCOPE_WRITE, SCOPE_READ, SCOPE_OTHER);
  /** The booking id practable's {@code relay token} writes when none is set. */
  static final String PRACTABLE_BOOKING_ID = "relay-token-cli";

  private final Map<String, String> environment;

  /** Defaults from this process's environment. */
  TokenEnvironment() {
    this(System.getenv());
  }

  TokenEnvironment(Map<String, String> environment) {
    this.environment = Map.copyOf(environment);
  }

  @Override
  public String defaultValue(ArgSpec arg) {
    if (!(arg instanceof OptionSpec option)) {
      return null;
    }
    String value =
        switch (option.longestName()) {
          case "--topic" -> get(TOPIC);
          case "--booking-id" -> firstSet(get(BOOKING_ID), practable() ? PRACTABLE_BOOKING_ID : null);
          case "--lifetime" -> get(LIFETIME);
          case "--audience" -> firstSet(get(AUDIENCE), get("RELAY_AUDIENCE"));
          case "--secret" -> firstSet(get(SECRET), get("RELAY_SECRET"));
          case "--secret-file" -> get("RELAY_SECRET_FILE");
          case "--prefix" -> get(CONNECTION_TYPE);
          case "--scopes" -> practable() ? String.join(",", scopes(option)) : null;
          default -> null;
        };
    // picocli expands ${...} and $$ in default values: a secret is taken as it is
    return value == null ? null : value.replace("$", "$$");
  }

  /** Whether any of practable's variables is set. */
  boolean practable() {
    return PRACTABLE.stream().anyMatch(name -> get(name) != null);
  }

  /** The scopes in practable's order: relay:admin, write, read, then RELAY_TOKEN_SCOPE_OTHER. */
  private List<String> scopes(OptionSpec option) {
    boolean admin = bool(option, SCOPE_ADMIN, false);
    boolean write = bool(option, SCOPE_WRITE, true);
    boolean read = bool(option, SCOPE_READ, true);
    if (!admin && !write && !read) {
      throw new CommandLine.ParameterException(
          option.command().commandLine(),
          "No scopes requested. Set one or more of RELAY_TOKEN_SCOPE_ADMIN, RELAY_TOKEN_SCOPE_READ, or RELAY_TOKEN_SCOPE_WRITE to be true");
    }
    List<String> scopes = new ArrayList<>();
    if (admin) {
      scopes.add("relay:admin");
    }
    if (write) {
      scopes.add("write");
    }
    if (read) {
      scopes.add("read");
    }
    String other = get(SCOPE_OTHER);
    if (other != null) {
      scopes.add(other);
    }
    return scopes;
  }

  private boolean bool(OptionSpec option, String name, boolean unset) {
    String value = get(name);
    if (value == null) {
      return unset;
    }
    return SettingsReader.parseGoBool(value)
        .orElseThrow(() -> new CommandLine.ParameterException(option.command().commandLine(), name + " must be true or false"));
  }

  private String get(String name) {
    String value = environment.get(name);
    return value == null || value.isEmpty() ? null : value;
  }

  private static String firstSet(String first, String second) {
    return first != null ? first : second;
  }
}
