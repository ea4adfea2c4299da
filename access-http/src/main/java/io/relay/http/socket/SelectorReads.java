package io.relay.http.socket;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.pekko.util.ByteString;

/**
 * The selector thread reading a plain socket for its stage ({@link SocketEndpoint#readBy}),
 * whenever the stage waits for bytes: when the socket turns readable the selector reads it and
 * hands the bytes over, so the stage is woken once, with bytes, and the selector keeps watching
 * the socket, with no call to change what it watches and no wake-up of the selector per read.
 * When the socket turns readable while the stage is still busy with its last bytes, the selector
 * stops watching it and the stage reads it itself when it wants more, handing it back ({@link
 * #readOnSelector}) only when its own read finds nothing: a stream that keeps a socket full is
 * read by its stage in a loop, and the selector never reads more than its stage asked for.
 */
final class SelectorReads {
  /** What the selector hands the stage when the peer has closed its side. */
  static final Object PEER_CLOSED = new Object();
  /** The stage waits for bytes: the selector watches the socket and reads it when it is readable. */
  private static final int WANTED = 0;
  /** The stage has the bytes it asked for: the selector watches the socket, but does not read it. */
  private static final int HANDED = 1;
  /** The stage reads the socket itself; the selector does not watch it. */
  private static final int BY_STAGE = 2;

  private final SocketEndpoint endpoint;
  private final SelectionKey key;
  /** Where each read goes: a {@link ByteString}, {@link #PEER_CLOSED} or the {@link IOException}. */
  private final Consumer<Object> reader;
  private final AtomicInteger state = new AtomicInteger(BY_STAGE);

  /** Until the stage's own read first finds nothing ({@link #readOnSelector}), the stage reads itself. */
  SelectorReads(SocketEndpoint endpoint, SelectionKey key, Consumer<Object> reader) {
    this.endpoint = endpoint;
    this.key = key;
    this.reader = reader;
  }

  /**
   * The stage waits for bytes: true when the selector reads them and hands them over, false when
   * the stage must read the socket itself (it turned readable while the stage was busy).
   */
  boolean wantBytes() {
    return state.compareAndSet(HANDED, WANTED);
  }

  /** The stage's own read found nothing: the selector watches the socket again and reads for it. */
  void readOnSelector() {
    state.set(WANTED);
    endpoint.watch(SelectionKey.OP_READ);
  }

  /** On the selector thread: the socket is readable. Read it if the stage waits, or leave it to the stage. */
  void readable() {
    while (true) {
      int now = state.get();
      if (now == WANTED) {
        if (state.compareAndSet(WANTED, HANDED)) {
          read();
          return;
        }
      } else if (now == BY_STAGE) {
        key.interestOpsAnd(~SelectionKey.OP_READ);
        return;
      } else {
        // the stage is busy: stop watching before saying so, so that its own watch comes after
        key.interestOpsAnd(~SelectionKey.OP_READ);
        if (state.compareAndSet(HANDED, BY_STAGE)) {
          return;
        }
        key.interestOpsOr(SelectionKey.OP_READ); // it asked for bytes meanwhile
      }
    }
  }

  private void read() {
    Object result;
    try {
      ByteString bytes = endpoint.readBytes();
      if (bytes != null && bytes.isEmpty()) {
        state.set(WANTED); // readable for nothing: the stage still waits
        return;
      }
      result = bytes == null ? PEER_CLOSED : bytes;
    } catch (IOException e) {
      result = e;
    }
    reader.accept(result);
    if (!(result instanceof ByteString)) {
      key.interestOpsAnd(~SelectionKey.OP_READ); // nothing more to read
    }
  }
}
