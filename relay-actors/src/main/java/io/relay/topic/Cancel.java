package io.relay.topic;

import io.relay.CborSerializable;

/** A denied booking, published on the cluster's cancel channel so every node closes it at once. */
public record Cancel(String bookingId) implements CborSerializable {}
