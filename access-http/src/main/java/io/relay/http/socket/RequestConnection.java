package io.relay.http.socket;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;
import io.relay.http.log.WarningLimiter;
import org.apache.pekko.util.ByteString;

/**
 * A connection whose requests the node reads itself, until the connection is handed on: each
 * request head is read on the selector thread ({@link RequestHead}, no stream runs) and, when the
 * port's {@link OwnRequests} takes it, answered; after the answer the connection reads the next
 * request (keep-alive, pipelined requests included), switches to the answer's protocol (one
 * stream for the rest of its life), or closes. On a port that {@link OwnRequests#handsOver hands
 * over}, the first request it does not take, and a head it cannot read, go with every byte not
 * consumed yet to Pekko HTTP's server layer ({@link HttpConnections}), which serves the rest of
 * the connection.
 *
 * <p>On such a port a taken request may carry a body announced by {@code Content-Length} of at
 * most {@link #MAX_BODY_BYTES}; it is read and dropped before the answer. A request with {@code
 * Transfer-Encoding} or {@code Expect}, a larger or unreadable {@code Content-Length}, or an
 * HTTP/1.1 head without exactly one {@code Host} goes to Pekko HTTP, which applies its own rules.
 * On a port that answers everything itself (the relay's), a head that cannot be parsed is refused
 * with its {@link RequestHead.Malformed} status and counted ({@code
 * relay_malformed_request_heads_total}); the log says only the status (a target may hold a code),
 * once of a kind per interval. The header and idle timeouts of the {@link SocketServer} apply.
 *
 * <p>One class of over 300 lines because it is one state machine over one socket (reading,
 * answering, writing, lingering), run by the selector thread and by whichever thread completes an
 * answer: who may touch the connection when is easiest to check with every transition in view.
 */
final class RequestConnection implements IntConsumer {
  /** The largest body a request the node answers itself may carry (a browser's small JSON body). */
  static final int MAX_BODY_BYTES = 16 * 1024;
  /** The most a refused peer may send after its request before the connection is closed at once. */
  private static final int MAX_DISCARDED = 64 * 1024;

  private enum State {
    READING,
    ANSWERING,
    WRITING,
    LINGERING,
    DONE
  }

  private final SocketEndpoint endpoint;
  private final OwnRequests requests;
  /** Where requests not taken go, or null on a port that answers every request itself. */
  private final HttpConnections fallback;
  private final WarningLimiter warnings;
  private final SocketCounters counters;
  /** What was read and not consumed yet; the current request starts at its first byte. */
  private byte[] buffer = new byte[1024];
  private int length;
  private RequestHead.Scanner scanner = new RequestHead.Scanner();
  private RequestHead head;
  /** Where the current request (head and body) ends in {@link #buffer}, once its head is read. */
  private int requestEnd = -1;
  /** Set before the selector is asked to watch the socket, read when it reports readiness. */
  private volatile State state = State.READING;
  private ByteBuffer response;
  private boolean keepAlive;
  /** What the peer sent after its last answer, read and dropped while the connection lingers. */
  private long discarded;
  /** Calls of {@link #read} not yet gone round. */
  private final AtomicInteger turns = new AtomicInteger();

  /**
   * @param fallback serves the connection from a request not taken on, or null when {@code
   *     requests} does not hand over
   */
  RequestConnection(
      SocketEndpoint endpoint, OwnRequests requests, HttpConnections fallback, WarningLimiter warnings, SocketCounters counters) {
    this.endpoint = endpoint;
    this.requests = requests;
    this.fallback = fallback;
    this.warnings = warnings;
    this.counters = counters;
  }

  /** Starts reading the first request head. */
  void start() {
    endpoint.attach(this);
    endpoint.watch(SelectionKey.OP_READ);
  }

  /** Readiness from the selector thread. */
  @Override
  public void accept(int ops) {
    if ((ops & SocketEndpoint.CLOSED) != 0) {
      state = State.DONE;
      return;
    }
    switch (state) {
      case READING -> read();
      case WRITING -> write();
      case LINGERING -> discard();
      default -> {}
    }
  }

  /**
   * Reads and moves requests on while the connection is reading. Never re-entered: a call made
   * while one runs (the next request, after an answer that was ready at once, on the same stack or
   * on the answering thread) makes the running one go round again, so a client that pipelines
   * requests answered at once (401s, 503s) cannot grow the stack.
   */
  private void read() {
    if (turns.getAndIncrement() != 0) {
      return;
    }
    do {
      if (state == State.READING) {
        readRequests();
      }
    } while (turns.decrementAndGet() != 0);
  }

  private void readRequests() {
    try {
      while (!moveOn()) {
        if (length == buffer.length) {
          int most = head == null ? RequestHead.MAX_HEAD_BYTES : requestEnd;
          buffer = Arrays.copyOf(buffer, Math.min(2 * buffer.length, most));
        }
        int n = endpoint.read(ByteBuffer.wrap(buffer, length, buffer.length - length));
        if (n < 0) {
          end();
          return;
        }
        if (n == 0) {
          endpoint.watch(SelectionKey.OP_READ);
          return;
        }
        length += n;
        endpoint.active();
        if (head == null) {
          endpoint.inHead(true);
        }
      }
    } catch (IOException e) {
      state = State.DONE;
      endpoint.reset();
    }
  }

  /**
   * Moves the current request on with what was read so far: answers it, hands it over or refuses
   * it, and returns true; false while it needs more bytes.
   */
  private boolean moveOn() throws IOException {
    if (head == null) {
      try {
        int end = scanner.end(buffer, length);
        if (end < 0) {
          return false;
        }
        endpoint.inHead(false);
        head = RequestHead.parse(buffer, end);
        requestEnd = end;
      } catch (RequestHead.Malformed e) {
        malformed(e);
        return true;
      }
      if (fallback != null) {
        int body = bodyLength(head);
        if (body < 0 || !requests.takes(head)) {
          handOver();
          return true;
        }
        requestEnd += body;
      }
    }
    if (length < requestEnd) {
      return false;
    }
    answer();
    return true;
  }

  /** The body's length by {@code Content-Length}, or -1 for a request Pekko HTTP must read. */
  private static int bodyLength(RequestHead head) {
    if (head.header("Transfer-Encoding") != null
        || head.header("Expect") != null
        || (head.version().equals("HTTP/1.1") && head.count("Host") != 1)) {
      return -1;
    }
    String value = head.header("Content-Length");
    if (value == null) {
      return 0;
    }
    if (head.count("Content-Length") > 1 || value.isEmpty() || value.length() > 6 || !value.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    int length = Integer.parseInt(value);
    return length <= MAX_BODY_BYTES ? length : -1;
  }

  private void malformed(RequestHead.Malformed e) {
    endpoint.inHead(false);
    if (fallback != null) {
      handOver();
      return;
    }
    counters.malformedHeads.increment();
    warnings.warn("refused a request that could not be parsed: {}", e.status());
    respond(PlainResponse.render(e.status(), e.getMessage(), Map.of()), false);
  }

  /** Pekko HTTP serves the connection from the current request on. */
  private void handOver() {
    state = State.DONE;
    ByteString unread = ByteString.fromArray(buffer, 0, length);
    buffer = null;
    fallback.serve(endpoint, unread);
  }

  private void answer() throws IOException {
    state = State.ANSWERING;
    InetSocketAddress peer = (InetSocketAddress) endpoint.channel().getRemoteAddress();
    try {
      requests.answer(head, peer).whenComplete(this::answered);
    } catch (RuntimeException e) {
      answered(null, e);
    }
  }

  private void answered(OwnRequests.Answer answer, Throwable failure) {
    if (failure != null) {
      warnings.error("answering a request failed", failure);
      respond(PlainResponse.render(500, "internal error", Map.of()), false);
    } else if (answer.protocol() != null) {
      state = State.DONE;
      ByteString unread = requestEnd < length ? ByteString.fromArray(buffer, requestEnd, length - requestEnd) : ByteString.emptyByteString();
      buffer = null;
      endpoint.serve(answer.protocol(), ByteString.fromArrayUnsafe(answer.response()), unread);
    } else {
      respond(answer.response(), answer.keepAlive());
    }
  }

  /**
   * Writes {@code bytes}; then reads the next request if {@code keepAlive}, or else shuts the
   * socket's output down and reads until the peer closes (at most {@link #MAX_DISCARDED} bytes,
   * for at most {@link ConnectionSweep#LINGER}): closing with the peer's bytes unread would reset the
   * connection, which can destroy the response before the client has read it.
   */
  private void respond(byte[] bytes, boolean keepAlive) {
    this.response = ByteBuffer.wrap(bytes);
    this.keepAlive = keepAlive;
    state = State.WRITING;
    write();
  }

  private void write() {
    try {
      if (endpoint.write(response) > 0) {
        endpoint.active();
      }
      if (response.hasRemaining() || endpoint.unflushed()) {
        endpoint.watch(SelectionKey.OP_WRITE);
        return;
      }
      response = null;
      if (keepAlive) {
        next();
        return;
      }
      endpoint.shutdownOutput();
    } catch (IOException e) {
      state = State.DONE;
      endpoint.reset();
      return;
    }
    state = State.LINGERING;
    buffer = null;
    endpoint.linger();
    discard();
  }

  /** Drops the answered request from the buffer and goes on with the next one. */
  private void next() {
    int left = length - requestEnd;
    System.arraycopy(buffer, requestEnd, buffer, 0, left);
    length = left;
    head = null;
    requestEnd = -1;
    scanner = new RequestHead.Scanner();
    state = State.READING;
    if (length > 0) {
      endpoint.inHead(true);
    }
    read();
  }

  private void discard() {
    ByteBuffer scratch = ByteBuffer.allocate(4096);
    try {
      while (true) {
        scratch.clear();
        int n = endpoint.read(scratch);
        if (n < 0 || (discarded += n) > MAX_DISCARDED) {
          end();
          return;
        }
        if (n == 0) {
          endpoint.watch(SelectionKey.OP_READ);
          return;
        }
      }
    } catch (IOException e) {
      end();
    }
  }

  /** Closes the connection: the peer closed its side, or lingering is over. */
  private void end() {
    state = State.DONE;
    endpoint.close();
  }
}
