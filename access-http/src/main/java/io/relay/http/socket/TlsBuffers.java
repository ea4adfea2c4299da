package io.relay.http.socket;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;
import tlschannel.BufferAllocator;

/**
 * The TLS layer's buffers, from the heap: each thread keeps the last few it gave back and hands
 * them out again. tls-channel takes a buffer for each read and write of a connection and gives it
 * back as soon as it is empty, so that an idle connection holds none; without reuse every record
 * read or written would allocate (and zero) a new one of about 17 KB.
 */
final class TlsBuffers implements BufferAllocator {
  /** Buffers each thread keeps: a few connections' worth of records in flight on it. */
  private static final int KEPT_PER_THREAD = 8;
  private static final ThreadLocal<ArrayDeque<ByteBuffer>> KEPT = ThreadLocal.withInitial(ArrayDeque::new);

  @Override
  public ByteBuffer allocate(int size) {
    Iterator<ByteBuffer> kept = KEPT.get().iterator();
    while (kept.hasNext()) {
      ByteBuffer buffer = kept.next();
      if (buffer.capacity() == size) {
        kept.remove();
        return buffer.clear();
      }
    }
    return ByteBuffer.allocate(size);
  }

  @Override
  public void free(ByteBuffer buffer) {
    ArrayDeque<ByteBuffer> kept = KEPT.get();
    if (kept.size() == KEPT_PER_THREAD) {
      kept.pollLast();
    }
    kept.addFirst(buffer);
  }
}
