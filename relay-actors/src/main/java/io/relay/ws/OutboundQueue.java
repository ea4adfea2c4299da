package io.relay.ws;

import io.relay.ws.WsFrames.Frame;
import java.util.ArrayDeque;

/**
 * One connection's bounded outbound queue, fed by writers on any thread and drained by the
 * connection's own stream.
 *
 * <p>It never blocks a writer, and a slow reader never slows one: past {@code maxMessages} or
 * {@code maxBytes} the oldest queued frames are dropped and counted (the newest frame is always
 * kept). A close request either discards what is queued and is delivered next, or (a graceful
 * close) lets what is already queued go first; either way nothing is queued after it. The drain
 * side registers a wake-up that is run once when a frame arrives at an empty queue it is waiting
 * on, so a busy connection costs no cross-thread signal per frame; a close request always wakes
 * it.
 *
 * <p>While the drain side is idle (its last {@link #poll} found nothing, and everything it sent is
 * written), a frame offered is written to the connection's socket at once, from the offering
 * writer's thread, through the {@link DirectSink} given to {@link #attach}: no hand-over to the
 * drain side's thread and no wake-up per frame. One writer writes at a time; frames offered
 * meanwhile are queued and the drain side is woken for them once that write ends. What the socket
 * did not take of a frame so written (it was full) is the first thing {@link #poll} hands out,
 * before anything else, a close included. Whenever the drain side sends anything itself, it first
 * waits for such a write to end: {@link #poll} does, and {@link #takeOver} for frames of its own.
 *
 * <p>The queue holds each frame for the node's {@link MemoryBudget}: a frame it drops, discards
 * or refuses is released at once, as is one written whole by a writer; one it hands to {@link
 * #poll} is the caller's to release.
 */
public final class OutboundQueue {
  private final int maxMessages;
  private final long maxBytes;
  /** Starts at the smallest: an idle connection holds nothing here. */
  private final ArrayDeque<Frame> frames = new ArrayDeque<>(1);
  private long bytes;
  private long dropped;
  private Frame closeFrame;
  private boolean flushFirst;
  private boolean closed;
  private boolean waiting;
  private Runnable wakeup;
  private DirectSink direct;
  /** The drain side is idle: its last poll found nothing and everything it sent is written. */
  private boolean idle;
  /** A writer's thread is writing the socket through {@link #direct}. */
  private boolean writing;
  /** The drain side waits for that write to end. */
  private boolean awaitingWriter;
  /** What the socket did not take of a frame a writer wrote: the next thing to send. */
  private Frame rest;

  /** Writes a frame to the connection's socket from a writer's thread. */
  public interface DirectSink {
    /**
     * Writes as much of {@code frame}'s wire bytes as the socket takes now, without blocking.
     *
     * @return how many bytes the socket took, or -1 when it failed (nothing of the frame was taken)
     */
    int write(Frame frame);
  }

  public OutboundQueue(int maxMessages, long maxBytes) {
    this.maxMessages = maxMessages;
    this.maxBytes = maxBytes;
  }

  /**
   * Queues a frame for sending, dropping the oldest queued frames past the bounds.
   *
   * @return how many frames were dropped to make room
   */
  public int offer(Frame frame) {
    Runnable toWake;
    DirectSink sink = null;
    int droppedNow = 0;
    synchronized (this) {
      if (closeFrame != null || closed) {
        frame.release();
        return 0;
      }
      if (idle && !writing && direct != null && frames.isEmpty()) {
        writing = true;
        sink = direct;
        toWake = null;
      } else {
        frames.addLast(frame);
        bytes += frame.payloadLength();
        while (frames.size() > 1 && (frames.size() > maxMessages || bytes > maxBytes)) {
          Frame oldest = frames.removeFirst();
          bytes -= oldest.payloadLength();
          oldest.release();
          droppedNow++;
        }
        dropped += droppedNow;
        // a writer writing the socket wakes the drain side for this frame once it is done
        toWake = writing ? null : takeWakeup();
      }
    }
    if (sink != null) {
      writeDirectly(sink, frame);
    } else if (toWake != null) {
      toWake.run();
    }
    return droppedNow;
  }

  /**
   * Writes {@code frame} through the direct sink, this thread having taken the socket; then hands
   * the socket back, waking the drain side for what the socket did not take or what was offered
   * meanwhile.
   */
  private void writeDirectly(DirectSink sink, Frame frame) {
    int written = sink.write(frame);
    boolean release = written == frame.wire().length();
    Runnable toWake = null;
    synchronized (this) {
      writing = false;
      if (awaitingWriter) {
        awaitingWriter = false;
        notifyAll();
      }
      if (closed) {
        release = true;
      } else if (!release) {
        rest = written < 0 ? frame : frame.rest(written);
        idle = false;
        toWake = takeWakeup();
      } else if (!frames.isEmpty()) {
        idle = false;
        toWake = takeWakeup();
      }
    }
    if (release) {
      frame.release();
    }
    if (toWake != null) {
      toWake.run();
    }
  }

  /**
   * Asks for the connection to be closed with this frame.
   *
   * @param flush true to send what is already queued first, false to drop it
   */
  public void close(Frame frame, boolean flush) {
    Runnable toWake;
    synchronized (this) {
      if (closeFrame != null || closed) {
        return;
      }
      closeFrame = frame;
      flushFirst = flush;
      if (!flush) {
        clear();
      }
      waiting = false;
      toWake = wakeup;
    }
    if (toWake != null) {
      toWake.run();
    }
  }

  /** Gives up flushing a graceful close: what is still queued is dropped, the close goes next. */
  public synchronized void discardPending() {
    clear();
    flushFirst = false;
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

  /** The connection ended: what is queued is released, and later offers are refused. */
  public synchronized void dispose() {
    closed = true;
    closeFrame = null;
    clear();
    if (rest != null) {
      rest.release();
      rest = null;
    }
  }

  /** Bytes of the frames waiting to be sent. */
  public synchronized long queuedBytes() {
    return rest == null ? bytes : bytes + rest.payloadLength();
  }

  private void clear() {
    for (Frame frame : frames) {
      frame.release();
    }
    frames.clear();
    bytes = 0;
  }

  /**
   * The next frame to send, or null. First comes what the socket did not take of a frame a writer
   * wrote, then a requested close (after what is queued, for a graceful one), then what is queued.
   * Waits for a writer writing the socket to finish first.
   *
   * <p>The drain side calls it only once everything it sent before is written: when it returns
   * null, the drain side is idle, and writers write the socket directly until it next sends
   * something; otherwise the wake-up registered with {@link #attach} runs once the next frame or
   * close arrives. The caller releases the frame once it no longer holds it.
   */
  public synchronized Frame poll() {
    Frame partly = takeOver();
    if (partly != null) {
      return partly;
    }
    if (closeFrame != null && (!flushFirst || frames.isEmpty())) {
      Frame close = closeFrame;
      closeFrame = null;
      closed = true;
      clear();
      return close;
    }
    Frame next = frames.pollFirst();
    if (next == null) {
      waiting = true;
      idle = true;
    } else {
      bytes -= next.payloadLength();
    }
    return next;
  }

  /**
   * The drain side is about to send a frame of its own (a pong, a ping, the answer to a close):
   * writers stop writing the socket directly, and a write under way finishes first. The drain side
   * is idle again after its next {@link #poll} that finds nothing.
   *
   * @return what the socket did not take of a frame a writer wrote, which must be sent before the
   *     drain side's own frame (the caller releases it), or null
   */
  public synchronized Frame takeOver() {
    idle = false;
    boolean interrupted = false;
    while (writing) {
      awaitingWriter = true;
      try {
        wait();
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    Frame partly = rest;
    rest = null;
    return partly;
  }

  /**
   * Registers the drain side's wake-up and, for a socket writers may write directly, the sink
   * they write it through; runs the wake-up at once if something is already queued. The drain
   * side is not idle until its first {@link #poll} that finds nothing.
   */
  public void attach(Runnable wakeup, DirectSink direct) {
    Runnable toWake;
    synchronized (this) {
      this.wakeup = wakeup;
      this.direct = direct;
      this.waiting = true;
      toWake = (closeFrame != null || !frames.isEmpty()) ? takeWakeup() : null;
    }
    if (toWake != null) {
      toWake.run();
    }
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
