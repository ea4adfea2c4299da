package io.relay.codes;

import io.relay.WireFormat;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * A replicated code: what it grants and the code store that decides its single use.
 *
 * <p>An entry is written once and then serialised with its shard for every delta, digest and
 * gossip round on every node, so it keeps its grant's wire form ({@link CodeShardSerializer}) once
 * made: the node that issues it encodes it once, a node that receives it keeps the bytes it read.
 * Equality is the grant's and the issuer's.
 */
public final class CodeEntry {
  private final CodeGrant grant;
  private final ActorRef<CodeStore.Command> issuer;
  /** The grant's wire form; made on first use, the same bytes whichever thread makes them. */
  private volatile byte[] wire;

  public CodeEntry(CodeGrant grant, ActorRef<CodeStore.Command> issuer) {
    this(grant, issuer, null);
  }

  CodeEntry(CodeGrant grant, ActorRef<CodeStore.Command> issuer, byte[] wire) {
    this.grant = grant;
    this.issuer = issuer;
    this.wire = wire;
  }

  public CodeGrant grant() {
    return grant;
  }

  public ActorRef<CodeStore.Command> issuer() {
    return issuer;
  }

  /** The grant's wire form ({@link #encode}), made once. */
  byte[] wire() {
    byte[] bytes = wire;
    if (bytes == null) {
      bytes = encode(grant);
      wire = bytes;
    }
    return bytes;
  }

  /** The entry whose grant {@link #wire} wrote as {@code wire}, keeping those bytes. */
  static CodeEntry read(byte[] wire, ActorRef<CodeStore.Command> issuer) {
    return new CodeEntry(decode(ByteBuffer.wrap(wire)), issuer, wire);
  }

  /**
   * A grant's wire form, shared by the shards and the issuer's answers: topic, scopes, booking id,
   * the two expiries.
   */
  static byte[] encode(CodeGrant grant) {
    return WireFormat.bytes(64 + grant.topic().length() + grant.bookingId().length(), out -> {
      WireFormat.writeString(out, grant.topic());
      out.writeByte(grant.scopes().size());
      for (String scope : grant.scopes()) {
        WireFormat.writeString(out, scope);
      }
      WireFormat.writeString(out, grant.bookingId());
      out.writeLong(grant.tokenExpiresAt());
      out.writeLong(grant.codeExpiresAt());
    });
  }

  /** Reads a grant {@link #encode} wrote; {@code in} must wrap an array. */
  static CodeGrant decode(ByteBuffer in) {
    String topic = WireFormat.readString(in);
    int scopeCount = Byte.toUnsignedInt(in.get());
    List<String> scopes = new ArrayList<>(scopeCount);
    for (int s = 0; s < scopeCount; s++) {
      scopes.add(WireFormat.readString(in));
    }
    String bookingId = WireFormat.readString(in);
    long tokenExpiresAt = in.getLong();
    long codeExpiresAt = in.getLong();
    return new CodeGrant(topic, List.copyOf(scopes), bookingId, tokenExpiresAt, codeExpiresAt);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CodeEntry other && grant.equals(other.grant) && Objects.equals(issuer, other.issuer);
  }

  @Override
  public int hashCode() {
    return grant.hashCode() * 31 + Objects.hashCode(issuer);
  }

  @Override
  public String toString() {
    return "CodeEntry(" + grant + ", " + issuer + ")";
  }
}
