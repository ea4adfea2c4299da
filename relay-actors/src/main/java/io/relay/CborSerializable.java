package io.relay;

/** Marker for every message and replicated value that crosses nodes; bound to jackson-cbor. */
public interface CborSerializable {}
