package io.relay;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPInputStream;

/**
 * The golden serialized forms in {@code src/test/resources/wire}: for each sample and format
 * version, {@code <name>.v<N>.bin} (the bytes) and {@code <name>.v<N>.properties} (the serializer's
 * id and the manifest they were written under). Read from the module's source tree, not the
 * classpath, so a recording is seen at once and never lands only in {@code target}.
 */
final class WireFixtures {
  /** One recorded format of a sample. */
  record Fixture(int version, int serializer, String manifest, byte[] bytes) {}

  private static final Pattern VERSION = Pattern.compile("\\.v(\\d+)\\.bin$");
  private static final int GZIP_MAGIC = 0x8b1f;

  private final Path dir;

  private WireFixtures(Path dir) {
    this.dir = dir;
  }

  /** The fixtures of the module whose test classes hold {@code anchor}. */
  static WireFixtures of(Class<?> anchor) {
    try {
      Path testClasses = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
      return new WireFixtures(testClasses.getParent().getParent().resolve("src/test/resources/wire"));
    } catch (URISyntaxException e) {
      throw new IllegalStateException("the test classes are not in a directory", e);
    }
  }

  Path dir() {
    return dir;
  }

  /** The recorded versions of {@code name}, oldest first. */
  List<Fixture> versions(String name) {
    List<Fixture> fixtures = new ArrayList<>();
    if (!Files.isDirectory(dir)) {
      return fixtures;
    }
    try (var files = Files.list(dir)) {
      for (Path bin : files.toList()) {
        String file = bin.getFileName().toString();
        Matcher version = VERSION.matcher(file);
        if (version.find() && file.substring(0, version.start()).equals(name)) {
          fixtures.add(read(bin, Integer.parseInt(version.group(1))));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    fixtures.sort(Comparator.comparingInt(Fixture::version));
    return fixtures;
  }

  /** Writes {@code fixture} as version {@link Fixture#version} of {@code name}; returns the file of its bytes. */
  Path write(String name, Fixture fixture, String serializerClass) {
    try {
      Files.createDirectories(dir);
      Path bin = dir.resolve(name + ".v" + fixture.version() + ".bin");
      Files.write(bin, fixture.bytes());
      String properties = "# " + name + " as " + serializerClass + " writes it (WireFormatsTest)\n"
          + "serializer=" + fixture.serializer() + "\n"
          + "manifest=" + fixture.manifest() + "\n";
      Files.writeString(sidecar(bin), properties, StandardCharsets.UTF_8);
      return bin;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The bytes as compared: Pekko gzips a replicated map, and gzip's output depends on the zlib the
   * JVM links as well as on the data, so a gzipped form is compared as what it unzips to.
   */
  static byte[] comparable(byte[] bytes) {
    if (bytes.length < 2 || ((bytes[0] & 0xff) | (bytes[1] & 0xff) << 8) != GZIP_MAGIC) {
      return bytes;
    }
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException("gzip magic without gzip data", e);
    }
  }

  private static Fixture read(Path bin, int version) throws IOException {
    Path sidecar = sidecar(bin);
    if (!Files.exists(sidecar)) {
      throw new IllegalStateException(bin + " has no " + sidecar.getFileName() + " naming its serializer and manifest");
    }
    Properties properties = new Properties();
    try (Reader in = Files.newBufferedReader(sidecar, StandardCharsets.UTF_8)) {
      properties.load(in);
    }
    return new Fixture(
        version, Integer.parseInt(properties.getProperty("serializer")), properties.getProperty("manifest"), Files.readAllBytes(bin));
  }

  private static Path sidecar(Path bin) {
    String file = bin.getFileName().toString();
    return bin.resolveSibling(file.substring(0, file.length() - ".bin".length()) + ".properties");
  }
}
