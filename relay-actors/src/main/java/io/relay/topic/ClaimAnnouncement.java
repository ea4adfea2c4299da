package io.relay.topic;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Claims published on the cluster's claim channel: one claim when a node accepts a topic's first
 * connection, or a node's whole digest of hosted topics, republished periodically; written by
 * {@link ClaimAnnouncementSerializer}.
 */
public record ClaimAnnouncement(String node, List<Claim> claims) {
  /**
   * The most one announcement takes on the wire: a quarter of Artery's 256 KiB maximum frame size,
   * which a node's digest of thousands of topics would pass in one message (Artery drops such a
   * message, so a lost first claim would never be repaired).
   */
  static final int MAX_BYTES = 64 * 1024;

  /** {@code claims} of {@code node} in announcements of at most {@link #MAX_BYTES} each on the wire, in order. */
  static List<ClaimAnnouncement> inParts(String node, List<Claim> claims) {
    List<ClaimAnnouncement> parts = new ArrayList<>();
    List<Claim> part = new ArrayList<>();
    int empty = 2 + utf8(node) + 4;
    int bytes = empty;
    for (Claim claim : claims) {
      int size = 2 + utf8(claim.topic()) + 8 + 1 + (claim.node().equals(node) ? 0 : 2 + utf8(claim.node()));
      if (!part.isEmpty() && bytes + size > MAX_BYTES) {
        parts.add(new ClaimAnnouncement(node, List.copyOf(part)));
        part.clear();
        bytes = empty;
      }
      part.add(claim);
      bytes += size;
    }
    if (!part.isEmpty()) {
      parts.add(new ClaimAnnouncement(node, List.copyOf(part)));
    }
    return parts;
  }

  private static int utf8(String value) {
    return value.getBytes(StandardCharsets.UTF_8).length;
  }
}
