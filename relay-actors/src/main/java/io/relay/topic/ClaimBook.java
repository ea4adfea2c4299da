package io.relay.topic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The claim rules of one node, as plain logic: which topics it claims, what a claim from another
 * node means for them, and the hold-down that follows an eviction.
 *
 * <p>After an eviction the topic is held down (refused with 503) for {@code holdDown}; a topic
 * evicted again within {@code flapWindow} of its previous eviction doubles its hold-down, up to
 * {@code maxHoldDown}, and is reported as flapping.
 */
final class ClaimBook {
  /** What to do about another node's claim. */
  enum Verdict {
    /** Not hosted here, or it is our own: nothing to do. */
    IGNORE,
    /** Their claim is newer: close our connections of the topic with 4001. */
    EVICT,
    /** Our claim is newer: announce it again so they evict theirs. */
    REASSERT
  }

  /** A topic refused here until {@code untilMillis}. */
  record HoldDown(long untilMillis, Duration period, long evictedAtMillis, String winner, boolean flapping) {}

  private final String self;
  private final Duration holdDown;
  private final Duration maxHoldDown;
  private final Duration flapWindow;
  private final Map<String, Claim> hosted = new HashMap<>();
  private final Map<String, HoldDown> holdDowns = new HashMap<>();
  /** The newest stamp seen per evicted topic, so a later claim of ours is newer still. */
  private final Map<String, Long> floors = new HashMap<>();

  ClaimBook(String self, Duration holdDown, Duration maxHoldDown, Duration flapWindow) {
    this.self = self;
    this.holdDown = holdDown;
    this.maxHoldDown = maxHoldDown;
    this.flapWindow = flapWindow;
  }

  /** Claims a topic for this node at {@code now}. */
  Claim claim(String topic, long now) {
    long stamp = Math.max(now, floors.getOrDefault(topic, Long.MIN_VALUE) + 1);
    Claim claim = new Claim(topic, self, stamp);
    hosted.put(topic, claim);
    return claim;
  }

  /** The topic is no longer hosted here (its last connection left). */
  void release(String topic) {
    hosted.remove(topic);
  }

  Optional<Claim> hosted(String topic) {
    return Optional.ofNullable(hosted.get(topic));
  }

  List<Claim> digest() {
    return new ArrayList<>(hosted.values());
  }

  /** Judges another node's claim; an eviction also starts the topic's hold-down. */
  Verdict judge(Claim theirs, long now) {
    if (theirs.node().equals(self)) {
      return Verdict.IGNORE;
    }
    Claim ours = hosted.get(theirs.topic());
    if (ours == null) {
      return Verdict.IGNORE;
    }
    if (ours.isNewerThan(theirs)) {
      return Verdict.REASSERT;
    }
    hosted.remove(theirs.topic());
    floors.put(theirs.topic(), theirs.stamp());
    holdDowns.put(theirs.topic(), nextHoldDown(theirs, now));
    return Verdict.EVICT;
  }

  private HoldDown nextHoldDown(Claim winner, long now) {
    HoldDown previous = holdDowns.get(winner.topic());
    boolean flapping = previous != null && now - previous.evictedAtMillis() < flapWindow.toMillis();
    Duration period = flapping ? min(previous.period().multipliedBy(2), maxHoldDown) : holdDown;
    return new HoldDown(now + period.toMillis(), period, now, winner.node(), flapping);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** The hold-down in force for a topic at {@code now}, if any. */
  Optional<HoldDown> holdDown(String topic, long now) {
    HoldDown held = holdDowns.get(topic);
    return held != null && held.untilMillis() > now ? Optional.of(held) : Optional.empty();
  }

  /** Forgets hold-downs and floors old enough to no longer matter. */
  void sweep(long now) {
    holdDowns.values().removeIf(h -> now - h.evictedAtMillis() > flapWindow.toMillis() + h.period().toMillis());
    floors.keySet().removeIf(topic -> !holdDowns.containsKey(topic));
  }
}
