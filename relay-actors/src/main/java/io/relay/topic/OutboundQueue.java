package io.relay.topic;

import io.prometheus.metrics.core.datapoints.CounterDataPoint;
import io.relay.memory.MemoryBudget;
import io.relay.ws.WsFrames;
import io.relay.ws.WsFrames.Frame;
import java.util.ArrayDeque;

/**
 * One connection's bounded outbound queue, fed by writers on any thread and drained by the
 * connection's own channel, on its event loop.
 *
 * <p>It never blocks a writer, and a slow reader never slows one: past {@code maxMessages} or
 * {@code maxBytes} the oldest queued frames are dropped and counted (the newest frame is always
 * kept). A close request either discards what is queued and is delivered next, or (a graceful
 * close) lets what is already queued go first; either way nothing is queued after it. The first
 * close request wins, except that one that closes at once overtakes a graceful one whose frame
 * has not gone yet: a deny during a drain cuts its reader off without the drain's flush. The drain
 * side registers a wake-up that is run once when a frame arrives at an empty queue it is waiting
 * on, so a busy connection costs no cross-thread signal per frame; a close request always wakes
 * it.
 *
 * <p>The queue holds each frame for the node's {@link MemoryBudget}: a frame it drops, discards
 * or refuses is released at once; one it hands out with {@link #poll} is the caller's to release.
 * What it lets go because of a close (offered once the close was asked, queued when a close that
 * does not wait for it was asked, when the client broke a rule during a graceful one, when the
 * client's close was answered, or when the connection ended) is counted as discarded.
 */
public final class OutboundQueue {
  private final int maxMessages;
  private final long maxBytes;
  private final CounterDataPoint discarded;
  /** Starts at the smallest: an idle connection holds nothing here. */
  private final ArrayDeque<Frame> frames = new ArrayDeque<>(1);
  private long bytes;
  private long dropped;
  private Frame closeFrame;
  private int closeCode;
  private boolean flushFirst;
  private boolean closed;
  /** The connection was dropped by its topic, its client's close was answered, or it ended: nothing is queued or sent any more. */
  private boolean disposed;
  private boolean waiting;
  private Runnable wakeup;

  /** @param discarded counts the frames a close lets go */
  public OutboundQueue(int maxMessages, long maxBytes, CounterDataPoint discarded) {
    this.maxMessages = maxMessages;
    this.maxBytes = maxBytes;
    this.discarded = discarded;
  }

  /**
   * Queues a frame for sending, dropping the oldest queued frames past the bounds.
   *
   * @return how many frames were dropped to make room
   */
  public int offer(Frame frame) {
    Runnable toWake;
    int droppedNow = 0;
    synchronized (this) {
      if (closeFrame != null || closed) {
        frame.release();
        discarded.inc();
        return 0;
      }
      frames.addLast(frame);
      bytes += frame.payloadLength();
      while (frames.size() > 1 && (frames.size() > maxMessages || bytes > maxBytes)) {
        Frame oldest = frames.removeFirst();
        bytes -= oldest.payloadLength();
        oldest.release();
        droppedNow++;
      }
      dropped += droppedNow;
      toWake = takeWakeup();
    }
    if (toWake != null) {
      toWake.run();
    }
    return droppedNow;
  }

  /**
   * Asks for the connection to be closed with {@code code}.
   *
   * @param flush true to send what is already queued first, false to drop it
   */
  public void close(int code, String reason, boolean flush) {
    Runnable toWake;
    synchronized (this) {
      if (closed || closeFrame != null && (flush || !flushFirst)) {
        return;
      }
      closeCode = code;
      closeFrame = WsFrames.close(code, reason);
      flushFirst = flush;
      if (!flush) {
        discard();
      }
      waiting = false;
      toWake = wakeup;
    }
    if (toWake != null) {
      toWake.run();
    }
  }

  /**
   * Gives up flushing a graceful close: what is still queued is dropped, counted as dropped, and
   * the close goes next.
   *
   * @return how many frames were dropped
   */
  public synchronized int discardPending() {
    flushFirst = false;
    return dropQueued();
  }

  /**
   * The client broke a rule while a graceful close was letting what is queued go first: what is
   * still queued is let go, counted as discarded, and the close goes next with its own code.
   */
  public synchronized void stopFlushing() {
    if (closeFrame != null && flushFirst) {
      flushFirst = false;
      discard();
    }
  }

  /**
   * Drops what is queued, counted as dropped: a reader shed to keep the node within its memory
   * budget loses its oldest frames first.
   *
   * @return how many frames were dropped
   */
  public synchronized int dropQueued() {
    int count = frames.size();
    dropped += count;
    clear();
    return count;
  }

  /**
   * The connection ended, its client's close was answered, or its topic dropped it: what is
   * queued is released, later offers are refused, and an attached drain side is woken to find it
   * so ({@link #isDisposed}).
   */
  public void dispose() {
    dispose(false);
  }

  /**
   * The client's close was answered: as {@link #dispose}, and a close the server asked for but
   * had not sent yet never goes out, so the connection counts as closed by its client ({@link
   * #closeCode} 0).
   */
  public void disposeAnsweringClient() {
    dispose(true);
  }

  private void dispose(boolean answeringClient) {
    Runnable toWake;
    synchronized (this) {
      if (answeringClient && closeFrame != null) {
        closeCode = 0;
      }
      if (disposed) {
        return; // the handler's end and its topic both dispose: the later one has nothing to do
      }
      disposed = true;
      closed = true;
      closeFrame = null;
      discard();
      waiting = false;
      toWake = wakeup;
      wakeup = null;
    }
    if (toWake != null) {
      toWake.run();
    }
  }

  /** Whether the connection ended or its topic dropped it ({@link #dispose}). */
  public synchronized boolean isDisposed() {
    return disposed;
  }

  /** Bytes of the frames waiting to be sent. */
  public synchronized long queuedBytes() {
    return bytes;
  }

  private void discard() {
    discarded.inc(frames.size());
    clear();
  }

  private void clear() {
    for (Frame frame : frames) {
      frame.release();
    }
    frames.clear();
    bytes = 0;
  }

  /**
   * The next frame to send, or null: a requested close (after what is queued, for a graceful
   * one), otherwise the oldest queued frame. When it returns null, the wake-up registered with
   * {@link #attach} runs once the next frame or close arrives. The caller releases the frame once
   * it no longer holds it.
   */
  public synchronized Frame poll() {
    if (closeFrame != null && (!flushFirst || frames.isEmpty())) {
      Frame close = closeFrame;
      closeFrame = null;
      closed = true;
      discard();
      return close;
    }
    Frame next = frames.pollFirst();
    if (next == null) {
      waiting = true;
    } else {
      bytes -= next.payloadLength();
    }
    return next;
  }

  /**
   * Registers the drain side's wake-up; runs it at once if something is already queued, and
   * otherwise when the first frame or close arrives, or the queue is disposed.
   *
   * @return false, registering nothing, if the queue was disposed first: its topic dropped the
   *     connection before the drain side attached
   */
  public boolean attach(Runnable wakeup) {
    Runnable toWake;
    synchronized (this) {
      if (disposed) {
        return false;
      }
      this.wakeup = wakeup;
      this.waiting = true;
      toWake = (closeFrame != null || !frames.isEmpty()) ? takeWakeup() : null;
    }
    if (toWake != null) {
      toWake.run();
    }
    return true;
  }

  /** The code of the close requested, or 0 if none was. */
  public synchronized int closeCode() {
    return closeCode;
  }

  /** Whether a close was requested (and perhaps already sent). */
  public synchronized boolean isClosing() {
    return closeFrame != null || closed;
  }

  /** Frames dropped from this queue so far. */
  public synchronized long dropped() {
    return dropped;
  }

  /** Frames waiting to be sent. */
  public synchronized int size() {
    return frames.size();
  }

  private Runnable takeWakeup() {
    if (waiting && wakeup != null) {
      waiting = false;
      return wakeup;
    }
    return null;
  }
}
