package io.relay;

/**
 * Marker for the messages and replicated values that cross nodes in Jackson CBOR (bound to
 * jackson-cbor); the code shards, the claims at a code's issuer and the claim announcements have
 * serializers of their own (reference.conf, docs/cluster.md "Wire formats and versions").
 */
public interface CborSerializable {}
