package io.relay.harness;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks the delivery promise: every frame a writer sent reaches every reader of its topic exactly
 * once and in order, except frames sent inside a reconnect window.
 *
 * <p>A topic's reconnect windows are, for every participant of the topic, the time from one of
 * its connections closing to its next connection opening, each opened {@code allowance} earlier
 * to cover frames already in flight when the server closed the topic (a client learns of a close
 * a little after the server made it). A frame is owed to a reader when it was sent while that
 * reader was connected and outside every window of the topic.
 */
public final class Delivery {
  private Delivery() {}

  /** What the users of all topics saw. */
  public record Summary(
      long framesSent,
      long framesOwed,
      long framesLostOutsideWindow,
      long duplicates,
      long outOfOrder,
      List<Long> windowsMillis,
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

  static Summary analyse(Collection<Traffic.Topic> topics, java.time.Duration allowance, long end) {
    long sentTotal = 0;
    long owed = 0;
    long lost = 0;
    long duplicates = 0;
    long outOfOrder = 0;
    List<Long> windowsMillis = new ArrayList<>();
    List<String> leftDisconnected = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (Traffic.Topic topic : topics) {
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
          windows.add(new long[] {c.closedAt() - allowance.toNanos(), reopen});
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
      List<long[]> sent = topic.sent();
      sentTotal += sent.size();
      for (Participant reader : topic.readers) {
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
        List<Participant.Connection> connections = reader.connections();
        for (long[] frame : sent) {
          long at = frame[1];
          if (connectedAt(connections, at, end) && !inside(windows, at)) {
            owed++;
            if (!got.contains(frame[0])) {
              lost++;
              if (problems.size() < 20) {
                problems.add(reader.name + " never received " + frame[0] + " sent outside any reconnect window");
              }
            }
          }
        }
      }
    }
    return new Summary(sentTotal, owed, lost, duplicates, outOfOrder, windowsMillis, leftDisconnected, problems);
  }

  private static boolean connectedAt(List<Participant.Connection> connections, long at, long end) {
    for (Participant.Connection c : connections) {
      if (c.openedAt() <= at && at <= (c.isOpen() ? end : c.closedAt())) {
        return true;
      }
    }
    return false;
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
