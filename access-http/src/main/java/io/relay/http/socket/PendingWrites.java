package io.relay.http.socket;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import org.apache.pekko.util.ByteString;

/**
 * What a {@link SocketStage} still has to write, in the pieces it was given, the first perhaps
 * written in part. Each element its stream pushed is reported once written whole ({@code
 * onWritten}, {@link io.relay.ws.SocketOutput.User#written}), in order; the stage's own first bytes
 * (the response that switched the protocol) are not. Used on the stage's thread.
 */
final class PendingWrites {
  /** Starts at the smallest: an idle connection holds nothing here. */
  private final ArrayDeque<ByteString> pieces = new ArrayDeque<>(1);
  /** Told each time an element pushed is written whole, or null. */
  private final Runnable onWritten;
  /** Bytes of the first piece already written. */
  private int writtenOfFirst;
  /** The first piece is the stage's own, not an element pushed: it is not reported. */
  private boolean firstIsOwn;
  private long bytes;

  PendingWrites(Runnable onWritten) {
    this.onWritten = onWritten;
  }

  /** The stage's own bytes, before any element pushed. */
  void addOwn(ByteString piece) {
    if (!piece.isEmpty()) {
      add(piece);
      firstIsOwn = true;
    }
  }

  /** An element pushed; one with nothing to write counts as written at once. */
  void add(ByteString piece) {
    if (piece.isEmpty()) {
      report();
    } else {
      pieces.addLast(piece);
      bytes += piece.length();
    }
  }

  /** Copies as many of the pieces, from the first unwritten byte, as fit into {@code buffer}. */
  void fill(ByteBuffer buffer) {
    int skip = writtenOfFirst;
    for (ByteString piece : pieces) {
      if (!buffer.hasRemaining()) {
        break;
      }
      (skip > 0 ? piece.drop(skip) : piece).copyToBuffer(buffer);
      skip = 0;
    }
  }

  /** Drops {@code n} written bytes from the front, reporting each element written whole. */
  void written(int n) {
    bytes -= n;
    int left = n;
    while (left > 0) {
      int unwrittenOfFirst = pieces.peekFirst().length() - writtenOfFirst;
      if (left < unwrittenOfFirst) {
        writtenOfFirst += left;
        return;
      }
      left -= unwrittenOfFirst;
      pieces.pollFirst();
      writtenOfFirst = 0;
      if (firstIsOwn) {
        firstIsOwn = false;
      } else {
        report();
      }
    }
  }

  boolean isEmpty() {
    return pieces.isEmpty();
  }

  /** Bytes still to write. */
  long bytes() {
    return bytes;
  }

  private void report() {
    if (onWritten != null) {
      onWritten.run();
    }
  }
}
