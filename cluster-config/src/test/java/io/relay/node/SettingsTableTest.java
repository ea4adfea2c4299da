package io.relay.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The README's settings table against the node's configuration: every variable the table names
 * is read by the node, and where the table gives a plain default (a duration, a size, a number,
 * a boolean) it is the configuration's.
 */
class SettingsTableTest {
  private static final Pattern ROW = Pattern.compile("^\\| (`RELAY_[A-Z_]+`(?:, `RELAY_[A-Z_]+`)*) \\| ([^|]*) \\|");
  private static final Pattern VARIABLE = Pattern.compile("RELAY_[A-Z_]+");
  private static final String SENTINEL = "env-";

  private record Row(List<String> variables, String defaultValue) {}

  private static List<Row> table() throws IOException {
    String readme = Files.readString(Path.of("..", "README.md"));
    String section = readme.substring(readme.indexOf("## Configuration"), readme.indexOf("## Deploying"));
    List<Row> rows = new ArrayList<>();
    for (String line : section.split("\n")) {
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        List<String> variables = new ArrayList<>();
        Matcher variable = VARIABLE.matcher(row.group(1));
        while (variable.find()) {
          variables.add(variable.group());
        }
        rows.add(new Row(variables, row.group(2).replace("`", "").trim()));
      }
    }
    return rows;
  }

  /** The node's own settings ({@code relay { }}), unresolved: every module's reference.conf and the node's application.conf. */
  private static Config unresolved() {
    return ConfigFactory.parseResourcesAnySyntax("application")
        .withFallback(ConfigFactory.parseResourcesAnySyntax("reference"))
        .withOnlyPath("relay");
  }

  /** The configuration key each variable sets, found by resolving every {@code ${?RELAY_...}} to a sentinel. */
  private static Map<String, String> keysOfVariables(List<String> variables) {
    Map<String, Object> sentinels = new HashMap<>();
    variables.forEach(v -> sentinels.put(v, SENTINEL + v));
    // ${?RELAY_...} is looked up at the root of the configuration before the environment
    Config resolved =
        ConfigFactory.parseMap(sentinels).withFallback(unresolved()).resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false));
    Map<String, String> keys = new HashMap<>();
    for (Map.Entry<String, ConfigValue> entry : resolved.getConfig("relay").entrySet()) {
      Object value = entry.getValue().unwrapped();
      if (value instanceof String text && text.startsWith(SENTINEL)) {
        keys.put(text.substring(SENTINEL.length()), "relay." + entry.getKey());
      }
    }
    return keys;
  }

  /** Every string literal naming a variable in the node's main sources (variables read in code). */
  private static String sources() throws IOException {
    StringBuilder all = new StringBuilder();
    for (String module : List.of("cluster-config", "access-http", "relay-actors")) {
      try (Stream<Path> files = Files.walk(Path.of("..", module, "src", "main", "java"))) {
        for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
          all.append(Files.readString(file));
        }
      }
    }
    return all.toString();
  }

  @Test
  void everyVariableTheTableNamesIsReadByTheNode() throws IOException {
    List<Row> rows = table();
    assertTrue(rows.size() > 40, "the table was found: " + rows.size() + " rows");
    List<String> variables = rows.stream().flatMap(r -> r.variables().stream()).toList();
    Map<String, String> keys = keysOfVariables(variables);
    String sources = sources();
    for (String variable : variables) {
      assertTrue(
          keys.containsKey(variable) || sources.contains("\"" + variable + "\""),
          variable + " is in the README's settings table, but no configuration key or code reads it");
    }
  }

  @Test
  void everyPlainDefaultTheTableGivesIsTheConfigurations() throws IOException {
    List<Row> rows = table();
    Map<String, String> keys = keysOfVariables(rows.stream().flatMap(r -> r.variables().stream()).toList());
    Config defaults = unresolved().resolve(ConfigResolveOptions.defaults().setUseSystemEnvironment(false));
    int compared = 0;
    for (Row row : rows) {
      String key = keys.get(row.variables().get(0));
      if (row.variables().size() != 1 || key == null || !defaults.hasPath(key)) {
        continue;
      }
      Config stated;
      try {
        stated = ConfigFactory.parseString("v = \"" + row.defaultValue() + "\"");
      } catch (ConfigException e) {
        continue;
      }
      String variable = row.variables().get(0);
      if (row.defaultValue().matches("\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)")) {
        assertEquals(defaults.getDuration(key), stated.getDuration("v"), variable + ": the README's default against " + key);
        compared++;
      } else if (row.defaultValue().matches("\\d+\\s*(KiB|MiB|GiB)")) {
        assertEquals(defaults.getBytes(key), stated.getBytes("v"), variable + ": the README's default against " + key);
        compared++;
      } else if (row.defaultValue().matches("\\d+|true|false|auto|text|json|on|off|access,relay|\\*|[0-9]+%")) {
        assertEquals(row.defaultValue(), defaults.getString(key), variable + ": the README's default against " + key);
        compared++;
      }
    }
    assertTrue(compared > 25, "plain defaults compared: " + compared);
  }
}
