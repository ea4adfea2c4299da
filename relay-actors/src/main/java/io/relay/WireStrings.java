package io.relay;

import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Strings in the relay's own wire forms (code shards, claims): UTF-8 after their length as an
 * unsigned short. The relay's strings (codes, topics, booking ids, node addresses, actor paths)
 * are far shorter than that bound.
 */
public final class WireStrings {
  private WireStrings() {}

  public static void write(DataOutputStream out, String value) throws IOException {
    byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
    if (utf8.length > 0xFFFF) {
      throw new IOException("a string of " + utf8.length + " bytes in a relay message");
    }
    out.writeShort(utf8.length);
    out.write(utf8);
  }

  /** Reads a string {@link #write} wrote; {@code in} must wrap an array. */
  public static String read(ByteBuffer in) {
    int length = Short.toUnsignedInt(in.getShort());
    String value = new String(in.array(), in.arrayOffset() + in.position(), length, StandardCharsets.UTF_8);
    in.position(in.position() + length);
    return value;
  }
}
