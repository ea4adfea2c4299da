package io.relay.codes;

import io.relay.WireStrings;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
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

  /** The grant's fields in {@link CodeShardSerializer}'s order: topic, scopes, booking id, the two expiries. */
  byte[] wire() {
    byte[] bytes = wire;
    if (bytes == null) {
      ByteArrayOutputStream buffer = new ByteArrayOutputStream(64 + grant.topic().length() + grant.bookingId().length());
      try (DataOutputStream out = new DataOutputStream(buffer)) {
        WireStrings.write(out, grant.topic());
        out.writeByte(grant.scopes().size());
        for (String scope : grant.scopes()) {
          WireStrings.write(out, scope);
        }
        WireStrings.write(out, grant.bookingId());
        out.writeLong(grant.tokenExpiresAt());
        out.writeLong(grant.codeExpiresAt());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      bytes = buffer.toByteArray();
      wire = bytes;
    }
    return bytes;
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
