package io.relay;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The pieces of the relay's own wire forms (code shards, claims): fields written through a {@link
 * DataOutputStream} and read from a {@link ByteBuffer}, strings as UTF-8 after their length as an
 * unsigned short. The relay's strings (codes, topics, booking ids, node addresses, actor paths)
 * are far shorter than that bound.
 */
public final class WireFormat {
  private WireFormat() {}

  /** The bytes {@code body} writes, in a buffer of {@code sizeHint} to start with. */
  public static byte[] bytes(int sizeHint, Body body) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(sizeHint);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      body.write(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  public static void writeString(DataOutputStream out, String value) throws IOException {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    if (utf8.length > 0xFFFF) {
      throw new IOException("a string of " + utf8.length + " bytes in a relay message");
    }
    out.writeShort(utf8.length);
    out.write(utf8);
  }

  /** Reads a string {@link #writeString} wrote; {@code in} must wrap an array. */
  public static String readString(ByteBuffer in) {
    int length = Short.toUnsignedInt(in.getShort());
    String value = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
    in.position(in.position() + length);
    return value;
  }

  /** Writes a message's fields. */
  @FunctionalInterface
  public interface Body {
    void write(DataOutputStream out) throws IOException;
  }
}
