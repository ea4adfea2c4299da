package io.relay.harness;

import io.relay.ws.CloseCodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Checks the delivery promise: every frame a writer sent reaches every reader of its topic exactly
 * once, intact and in order, except frames sent inside a reconnect window or on their way at a
 * close the server made, and a reader receives nothing else (no message of another topic, no bytes that are not a writer's message).
 *
 * <p>A topic's reconnect windows are, for every participant of the topic, the time from one of
 * its connections closing to its next connection opening, each opened earlier by the time a frame
 * was in flight then, to cover frames already on their way when the server closed the topic (a
 * client learns of a close a frame's journey after the server made it). That time is {@code
 * allowance}, or longer when the topic's readers took longer to receive frames from a second
 * before the close until it (up to {@link #LONGEST_IN_FLIGHT}): on a machine whose cores a
 * starting JVM takes, a client notices a close hundreds of milliseconds late, and the frames it
 * received just before show it. A connection closed because its topic moved (4001) was
 * split from the topic from the moment the new owner accepted the connection that claimed it:
 * frames sent on the old node then cannot reach readers already on the new one. Its window
 * therefore opens at the earliest connection another participant of the topic opened while it
 * was open (the claim is one of those), again that much earlier. A connection that was
 * open when the scenario killed its topic's node ({@link Traffic#crashed}) and closed after it was
 * cut off at the kill: its window opens at the kill, again that much earlier. Frames sent
 * to a dead node cannot arrive, and how long its clients take to notice depends on how fast the
 * kernel tears the process down and the proxy and clients get the CPU (hundreds of milliseconds
 * with thousands of connections on a busy machine), not on the relay.
 *
 * <p>A stall that starts as the server closes a topic (a process on the path descheduled
 * for a few hundred milliseconds) leaves no slow frame to measure it by: the frames it held up
 * were the ones the close discarded. Those frames are recognised by their shape instead ({@link
 * #tailBeforeClose}): what a close loses is the tail of what the writer sent before it, never a
 * frame followed by frames that arrived. A frame is owed to a reader when it was sent while that
 * reader was connected, outside every window of the topic, and not in such a tail.
 */
public final class Delivery {
  /**
   * The most a frame is taken to have been in flight, however long frames took: a reader whose
   * frames waited seconds in its queue on the server must not excuse other readers' losses.
   */
  static final Duration LONGEST_IN_FLIGHT = Duration.ofSeconds(1);

  /**
   * The closes the server makes by design, each ending a connection whose frames on their way are
   * lost: a drain, a move, an expiry, a deny, a shed. Not a fault's 1011, nor a client's own
   * close (a 1009 for a frame it cannot read, a 1006 for a connection that ended without a close
   * frame, as at a node's kill).
   */
  private static final Set<Integer> PLANNED_CLOSES =
      Set.of(CloseCodes.GOING_AWAY, CloseCodes.TOPIC_MOVED, CloseCodes.TOKEN_EXPIRED, CloseCodes.BOOKING_DENIED, CloseCodes.TRY_AGAIN_LATER);

  private Delivery() {}

  /** What the users of all topics saw. */
  public record Summary(
      long framesSent,
      long framesOwed,
      long framesLostOutsideWindow,
      long foreign,
      long duplicates,
      long outOfOrder,
      List<Long> windowsMillis,
      long longestInFlightMillis,
      long longestTailBeforeCloseMillis,
      List<String> leftDisconnected,
      List<String> problems) {

    public long percentile(double p) {
      if (windowsMillis.isEmpty()) {
        return 0;
      }
      List<Long> sorted = new ArrayList<>(windowsMillis);
      sorted.sort(null);
      int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
      return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }
  }

  static Summary analyse(Collection<Traffic.Topic> topics, Duration allowance, long end) {
    long sentTotal = 0;
    long owed = 0;
    long lost = 0;
    long foreign = 0;
    long duplicates = 0;
    long outOfOrder = 0;
    List<Long> windowsMillis = new ArrayList<>();
    long longestInFlight = 0;
    long longestTail = 0;
    List<String> leftDisconnected = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    Map<Traffic.Topic, List<long[]>> arrivalsByTopic = new HashMap<>();
    List<long[]> everyArrival = new ArrayList<>();
    for (Traffic.Topic topic : topics) {
      List<long[]> arrivals = arrivals(topic, topic.sent());
      arrivalsByTopic.put(topic, arrivals);
      everyArrival.addAll(arrivals);
    }
    everyArrival.sort(Comparator.comparingLong(a -> a[0]));
    for (Traffic.Topic topic : topics) {
      List<long[]> sent = topic.sent();
      List<long[]> arrivals = arrivalsByTopic.get(topic);
      List<long[]> windows = new ArrayList<>();
      for (Participant p : topic.participants()) {
        List<Participant.Connection> connections = p.connections();
        for (int i = 0; i < connections.size(); i++) {
          Participant.Connection c = connections.get(i);
          if (c.isOpen()) {
            continue;
          }
          boolean reopened = i + 1 < connections.size();
          long reopen = reopened ? connections.get(i + 1).openedAt() : end;
          long split = splitFrom(topic, p, c);
          long inFlight = inFlight(arrivals, split, c.closedAt(), allowance);
          longestInFlight = Math.max(longestInFlight, inFlight);
          windows.add(new long[] {split - inFlight, reopen});
          if (reopened) {
            windowsMillis.add((reopen - c.closedAt()) / 1_000_000);
          } else if (!p.isStopped()) {
            leftDisconnected.add(p.name);
          }
        }
        if (connections.isEmpty()) {
          leftDisconnected.add(p.name);
        }
      }
      sentTotal += sent.size();
      Map<Participant, List<Participant.Connection>> connectionsOf = new HashMap<>();
      topic.participants().forEach(p -> connectionsOf.put(p, p.connections()));
      Map<Participant, Set<Long>> gotBy = new HashMap<>();
      for (Participant reader : topic.readers) {
        for (String message : reader.foreign()) {
          foreign++;
          problems.add(reader.name + " of topic " + topic.name + " received a message not of its topic: " + message);
        }
        Set<Long> got = new HashSet<>();
        long last = -1;
        for (Participant.Received r : reader.received()) {
          if (!got.add(r.seq())) {
            duplicates++;
            problems.add(reader.name + " received " + r.seq() + " twice");
          }
          if (r.seq() <= last) {
            outOfOrder++;
            problems.add(reader.name + " received " + r.seq() + " after " + last);
          }
          last = Math.max(last, r.seq());
        }
        gotBy.put(reader, got);
      }
      for (Participant reader : topic.readers) {
        Set<Long> got = gotBy.get(reader);
        for (int i = 0; i < sent.size(); i++) {
          long[] frame = sent.get(i);
          long at = frame[1];
          Participant.Connection connection = connectionAt(connectionsOf.get(reader), at);
          if (connection == null) {
            continue;
          }
          if (inside(windows, at)) {
            continue;
          }
          boolean received = got.contains(frame[0]);
          long tail = received ? -1 : tailBeforeClose(topic, sent, i, reader, connectionsOf, gotBy);
          if (tail >= 0) {
            longestTail = Math.max(longestTail, tail);
            continue;
          }
          owed++;
          if (!received) {
            lost++;
            if (problems.size() < 20) {
              problems.add(
                  reader.name + " never received " + frame[0] + " sent outside any reconnect window and not on its way at a close, "
                      + (end - at) / 1_000_000 + " ms before the analysis, while frames took up to "
                      + longestTook(arrivals, at - TimeUnit.SECONDS.toNanos(1), at + TimeUnit.SECONDS.toNanos(1)) / 1_000_000 + " ms"
                      + " (any topic's: " + longestTook(everyArrival, at - TimeUnit.SECONDS.toNanos(1), at + TimeUnit.SECONDS.toNanos(1)) / 1_000_000 + " ms)"
                      + nextSent(sent, i) + nextReceived(reader, frame[0])
                      + history(reader, end) + "; writer" + history(topic.writer, end));
            }
          }
        }
      }
    }
    return new Summary(
        sentTotal, owed, lost, foreign, duplicates, outOfOrder, windowsMillis, longestInFlight / 1_000_000, longestTail / 1_000_000,
        leftDisconnected, problems);
  }

  /** When {@code closed}, a connection of {@code owner}, stopped reaching the rest of its topic. */
  private static long splitFrom(Traffic.Topic topic, Participant owner, Participant.Connection closed) {
    long from = closed.closedAt();
    for (long crash : topic.crashes()) {
      if (closed.openedAt() < crash && crash <= closed.closedAt()) {
        from = Math.min(from, crash);
      }
    }
    if (closed.closeCode() != CloseCodes.TOPIC_MOVED) {
      return from;
    }
    for (Participant other : topic.participants()) {
      if (other == owner) {
        continue;
      }
      for (Participant.Connection c : other.connections()) {
        if (c.openedAt() > closed.openedAt() && c.openedAt() < from) {
          from = c.openedAt();
        }
      }
    }
    return from;
  }

  /**
   * How long before {@code split} a frame could have been sent and still been on its way: {@code
   * allowance}, or the longest a reader of the topic took to receive a frame from {@code split}'s
   * second before until {@code closed}, at most {@link #LONGEST_IN_FLIGHT}; in nanoseconds.
   */
  private static long inFlight(List<long[]> arrivals, long split, long closed, Duration allowance) {
    long took = longestTook(arrivals, split - TimeUnit.SECONDS.toNanos(1), closed);
    return Math.max(allowance.toNanos(), Math.min(took, LONGEST_IN_FLIGHT.toNanos()));
  }

  /**
   * The longest a frame received from {@code from} to {@code to} took, in nanoseconds; {@code
   * arrivals} holds the topic's received frames as (received at, took), in the order received.
   */
  private static long longestTook(List<long[]> arrivals, long from, long to) {
    int low = 0;
    int high = arrivals.size();
    while (low < high) {
      int middle = (low + high) >>> 1;
      if (arrivals.get(middle)[0] < from) {
        low = middle + 1;
      } else {
        high = middle;
      }
    }
    long longest = 0;
    for (int i = low; i < arrivals.size() && arrivals.get(i)[0] <= to; i++) {
      longest = Math.max(longest, arrivals.get(i)[1]);
    }
    return longest;
  }

  /** Every frame the topic's readers received, as (received at, took), in the order received. */
  private static List<long[]> arrivals(Traffic.Topic topic, List<long[]> sent) {
    Map<Long, Long> sentAt = new HashMap<>();
    sent.forEach(frame -> sentAt.put(frame[0], frame[1]));
    List<long[]> arrivals = new ArrayList<>();
    for (Participant reader : topic.readers) {
      for (Participant.Received r : reader.received()) {
        Long at = sentAt.get(r.seq());
        if (at != null) {
          arrivals.add(new long[] {r.at(), r.at() - at});
        }
      }
    }
    arrivals.sort(Comparator.comparingLong(a -> a[0]));
    return arrivals;
  }

  /** When the writer sent the frame after the {@code i}th of {@code sent}, for a problem report. */
  private static String nextSent(List<long[]> sent, int i) {
    return i + 1 < sent.size() ? "; the writer sent the next frame " + (sent.get(i + 1)[1] - sent.get(i)[1]) / 1_000_000 + " ms later" : "; the writer sent nothing after it";
  }

  /** The frame a reader received after missing {@code seq}, and when, for a problem report. */
  private static String nextReceived(Participant reader, long seq) {
    for (Participant.Received r : reader.received()) {
      if (r.seq() > seq) {
        return "; the reader's next frame was " + r.seq();
      }
    }
    return "; the reader received nothing after it";
  }

  /** A reader's connections and last frame, in ms before {@code end}, for a problem report. */
  private static String history(Participant reader, long end) {
    StringBuilder text = new StringBuilder(" (connections, ms before the analysis:");
    for (Participant.Connection c : reader.connections()) {
      text.append(" [").append((end - c.openedAt()) / 1_000_000).append(" .. ");
      text.append(c.isOpen() ? "open" : (end - c.closedAt()) / 1_000_000 + " closed " + c.closeCode()).append(']');
    }
    List<Participant.Received> received = reader.received();
    if (!received.isEmpty()) {
      Participant.Received last = received.get(received.size() - 1);
      text.append("; last received ").append(last.seq()).append(' ').append((end - last.at()) / 1_000_000).append(" ms before");
    }
    return text.append(')').toString();
  }

  /**
   * How long before a close the server made {@code reader} missed frame {@code i} of {@code sent}
   * because it was on its way then, in nanoseconds; -1 if that is not why. A close loses what is
   * on its way at that moment and nothing sent before it, so what it loses is everything the
   * writer sent from some frame until the close: at the reader's close, a tail of what that reader
   * missed; at the writer's close (the server discards what a writer sends once it is closing it),
   * a tail that every reader connected at any time from the frame until that close missed. A tail
   * is taken as on its way for at most {@link #LONGEST_IN_FLIGHT}. Unlike a window, this needs no
   * slow frame to show how long the journey took: a stall that starts with the close leaves no
   * frame to show it. A frame missed among frames that arrived after it is no tail, and only the
   * closes the server makes by design count ({@link #PLANNED_CLOSES}): a connection that ended
   * without a close frame (a node killed) is excused only by its window.
   */
  private static long tailBeforeClose(
      Traffic.Topic topic, List<long[]> sent, int i, Participant reader, Map<Participant, List<Participant.Connection>> connectionsOf,
      Map<Participant, Set<Long>> gotBy) {
    long at = sent.get(i)[1];
    Participant.Connection own = connectionAt(connectionsOf.get(reader), at);
    if (planned(own) && missedUntil(sent, i, own.closedAt(), gotBy.get(reader))) {
      return own.closedAt() - at;
    }
    Participant.Connection writer = connectionAt(connectionsOf.get(topic.writer), at);
    if (!planned(writer)) {
      return -1;
    }
    for (Participant other : topic.readers) {
      boolean connected = connectionsOf.get(other).stream().anyMatch(c -> c.openedAt() <= writer.closedAt() && (c.isOpen() || c.closedAt() >= at));
      if (connected && !missedUntil(sent, i, writer.closedAt(), gotBy.get(other))) {
        return -1;
      }
    }
    return writer.closedAt() - at;
  }

  /** Whether {@code c} ended with a close the server makes by design. */
  private static boolean planned(Participant.Connection c) {
    return c != null && !c.isOpen() && PLANNED_CLOSES.contains(c.closeCode());
  }

  /**
   * Whether {@code got} lacks every frame of {@code sent} from the {@code i}th until {@code close},
   * which comes at most {@link #LONGEST_IN_FLIGHT} after it.
   */
  private static boolean missedUntil(List<long[]> sent, int i, long close, Set<Long> got) {
    if (close - sent.get(i)[1] > LONGEST_IN_FLIGHT.toNanos()) {
      return false;
    }
    for (int j = i; j < sent.size() && sent.get(j)[1] <= close; j++) {
      if (got.contains(sent.get(j)[0])) {
        return false;
      }
    }
    return true;
  }

  /** The connection open at {@code at}, or null if none was. */
  private static Participant.Connection connectionAt(List<Participant.Connection> connections, long at) {
    for (Participant.Connection c : connections) {
      if (c.openedAt() <= at && (c.isOpen() || at <= c.closedAt())) {
        return c;
      }
    }
    return null;
  }

  private static boolean inside(List<long[]> windows, long at) {
    for (long[] w : windows) {
      if (w[0] <= at && at <= w[1]) {
        return true;
      }
    }
    return false;
  }
}
