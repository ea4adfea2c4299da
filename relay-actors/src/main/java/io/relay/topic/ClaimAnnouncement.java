package io.relay.topic;

import java.util.List;

/**
 * Claims published on the cluster's claim channel: one claim when a node accepts a topic's first
 * connection, or a node's whole digest of hosted topics, republished periodically; written by
 * {@link ClaimAnnouncementSerializer}.
 */
public record ClaimAnnouncement(String node, List<Claim> claims) {}
