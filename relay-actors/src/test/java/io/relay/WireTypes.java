package io.relay;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Finds the types that cross nodes: every concrete class of this module's {@code io.relay}
 * classes that is, or implements, a type {@code pekko.actor.serialization-bindings} binds (the
 * marker {@link CborSerializable} among them), found by walking the compiled classes, so that a
 * new one is found without anyone listing it.
 */
final class WireTypes {
  /** What marks a source file of another module as declaring a type or a binding that crosses nodes. */
  private static final List<String> MARKS = List.of("CborSerializable", "serialization-bindings", "pekko.actor.serializers");

  private WireTypes() {}

  /** The concrete classes of this module bound to a serializer by {@code config}, by name. */
  static List<Class<?>> bound(Config config) {
    List<Class<?>> boundTypes = new ArrayList<>();
    for (String name : new TreeSet<>(config.getObject("pekko.actor.serialization-bindings").unwrapped().keySet())) {
      if (name.startsWith("io.relay.")) {
        boundTypes.add(load(name));
      }
    }
    List<Class<?>> found = new ArrayList<>();
    for (Class<?> type : compiledClasses()) {
      boolean concrete = !type.isInterface() && !Modifier.isAbstract(type.getModifiers());
      if (concrete && boundTypes.stream().anyMatch(bound -> bound.isAssignableFrom(type))) {
        found.add(type);
      }
    }
    return found;
  }

  /**
   * The source and configuration files of the project's other modules that mention the marker
   * interface or a serializer binding: types that cross nodes declared where this test does not
   * see them. {@code fixtures} is this module's fixture directory.
   */
  static List<String> declaredOutsideThisModule(Path fixtures) {
    Path module = fixtures.getParent().getParent().getParent().getParent();
    List<String> offenders = new ArrayList<>();
    try (Stream<Path> modules = Files.list(module.getParent())) {
      for (Path other : modules.filter(dir -> !dir.equals(module) && Files.isDirectory(dir.resolve("src/main"))).toList()) {
        try (Stream<Path> files = Files.walk(other.resolve("src/main"))) {
          for (Path file : files.filter(WireTypes::isSourceOrConfig).toList()) {
            String text = Files.readString(file);
            if (MARKS.stream().anyMatch(text::contains)) {
              offenders.add(module.getParent().relativize(file).toString());
            }
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return offenders;
  }

  private static boolean isSourceOrConfig(Path file) {
    String name = file.getFileName().toString();
    return name.endsWith(".java") || name.endsWith(".conf");
  }

  /** Every class compiled from this module's {@code src/main}. */
  private static Set<Class<?>> compiledClasses() {
    Path classes;
    try {
      classes = Path.of(CborSerializable.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException("the module's classes are not in a directory", e);
    }
    Set<Class<?>> found = new HashSet<>();
    try (Stream<Path> files = Files.walk(classes)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
        String name = classes.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".");
        name = name.substring(0, name.length() - ".class".length());
        if (name.startsWith("io.relay.") && !name.endsWith("package-info") && !name.endsWith("module-info")) {
          found.add(load(name));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return found;
  }

  private static Class<?> load(String name) {
    try {
      return Class.forName(name, false, WireTypes.class.getClassLoader());
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("serialization-bindings names " + name + ", which is not on the classpath", e);
    }
  }
}
