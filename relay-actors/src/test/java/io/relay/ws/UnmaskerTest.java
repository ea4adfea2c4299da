package io.relay.ws;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.Arrays;
import java.util.Random;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/** The fast unmasker gives exactly what RFC 6455's byte-by-byte definition gives. */
class UnmaskerTest {
  private static byte[] reference(byte[] data, int mask, long offset) {
    byte[] out = data.clone();
    for (int i = 0; i < out.length; i++) {
      int keyByte = (int) ((offset + i) & 3);
      out[i] ^= (byte) (mask >>> (24 - 8 * keyByte));
    }
    return out;
  }

  @Test
  void matchesTheReferenceForRandomInputsLengthsAndOffsets() {
    Random random = new Random(42);
    for (int n = 0; n < 20_000; n++) {
      byte[] data = new byte[random.nextInt(300)];
      random.nextBytes(data);
      int mask = random.nextInt();
      long offset = random.nextInt(1 << 20);
      byte[] fast = Unmasker.unmask(ByteString.fromArray(data), mask, offset).toArray();
      assertArrayEquals(reference(data, mask, offset), fast, "length " + data.length + " offset " + offset);
    }
  }

  @Test
  void unmaskingInChunksEqualsUnmaskingWhole() {
    Random random = new Random(7);
    byte[] data = new byte[10_000];
    random.nextBytes(data);
    int mask = random.nextInt();
    ByteString whole = Unmasker.unmask(ByteString.fromArray(data), mask, 0);
    ByteString chunked = ByteString.emptyByteString();
    int offset = 0;
    while (offset < data.length) {
      int size = Math.min(data.length - offset, 1 + random.nextInt(777));
      chunked = chunked.concat(Unmasker.unmask(ByteString.fromArray(data, offset, size), mask, offset));
      offset += size;
    }
    assertArrayEquals(whole.toArray(), chunked.toArray());
  }

  @Test
  void largePayloadsAreUnmaskedWhereTheyLieWithoutTouchingTheirNeighbours() {
    Random random = new Random(11);
    for (int n = 0; n < 2_000; n++) {
      // like a socket read holding a frame header, a payload, and the start of the next frame
      byte[] read = new byte[600 + random.nextInt(40_000)];
      random.nextBytes(read);
      byte[] received = read.clone();
      int start = random.nextInt(read.length / 3);
      int end = start + random.nextInt(read.length - start + 1);
      int mask = random.nextInt();
      long offset = random.nextInt(1 << 20);
      ByteString payload = ByteString.fromArrayUnsafe(read).slice(start, end);

      ByteString unmasked = Unmasker.unmask(payload, mask, offset);

      byte[] expected = reference(Arrays.copyOfRange(received, start, end), mask, offset);
      assertArrayEquals(expected, unmasked.toArray(), "slice " + start + ".." + end + " of " + read.length);
      assertArrayEquals(Arrays.copyOfRange(received, 0, start), Arrays.copyOfRange(read, 0, start), "bytes before the payload");
      assertArrayEquals(Arrays.copyOfRange(received, end, read.length), Arrays.copyOfRange(read, end, read.length), "bytes after the payload");
      int length = end - start;
      if (length >= 512 && 2 * length >= read.length) {
        assertSame(payload, unmasked, "a payload filling at least half of its read is unmasked where it lies");
      } else {
        assertArrayEquals(received, read, "a small payload, or a small part of a large read, is copied: the read is untouched");
      }
    }
  }
}
