package io.relay.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** Reads the Kubernetes manifests under deploy/kubernetes as typed Kubernetes objects. */
final class Manifests {
  static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private Manifests() {}

  /** The deploy/ directory: set by Maven, or the working directory's deploy/. */
  static Path deployDir() {
    return Path.of(System.getProperty("relay.deploy.dir", "deploy"));
  }

  static Path kubernetes() {
    return deployDir().resolve("kubernetes");
  }

  /** Every manifest file (not a kustomization) under {@code dir}, recursively. */
  static List<Path> manifestFiles(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(p -> p.toString().endsWith(".yaml"))
          .filter(p -> !p.getFileName().toString().equals("kustomization.yaml"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The YAML documents of a file, each parsed by fabric8 into the class its apiVersion and kind name. */
  static List<HasMetadata> objects(Path file) {
    List<HasMetadata> objects = new ArrayList<>();
    for (String doc : documents(file)) {
      Object parsed = Serialization.unmarshal(doc);
      if (!(parsed instanceof HasMetadata object)) {
        throw new AssertionError(file + ": a document is not a Kubernetes object: " + parsed);
      }
      objects.add(object);
    }
    return objects;
  }

  /** Every object of the base or an overlay directory's own files. */
  static List<HasMetadata> objectsIn(Path dir) {
    return manifestFiles(dir).stream().flatMap(f -> objects(f).stream()).toList();
  }

  static <T extends HasMetadata> T one(List<HasMetadata> objects, Class<T> type, String name) {
    return objects.stream()
        .filter(type::isInstance)
        .map(type::cast)
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " named " + name + " in " + objects.stream().map(o -> o.getKind() + "/" + o.getMetadata().getName()).toList()));
  }

  static List<String> documents(Path file) {
    try {
      List<String> docs = new ArrayList<>();
      for (String doc : Files.readString(file).split("(?m)^---\\s*$")) {
        if (doc.lines().anyMatch(l -> !l.isBlank() && !l.stripLeading().startsWith("#"))) {
          docs.add(doc);
        }
      }
      return docs;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode yaml(Path file) {
    try {
      return YAML.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
