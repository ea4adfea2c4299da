package io.relay.codes;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * The replicated form of a code ({@link CodeStore.Entry}): its fields in a fixed order, strings as
 * modified UTF-8, the issuer as its actor path. Every admission writes one entry, and Distributed
 * Data serializes the code maps again for each delta, digest and gossip round; Jackson CBOR spent
 * most of a node's Distributed Data time there and wrote the record's class and field names into
 * every entry.
 *
 * <p>Manifest {@code E1} is this layout; a changed layout gets a new manifest, and this serializer
 * keeps reading the old ones. Entries written with Jackson CBOR (by a build before this
 * serializer) are still read by the Jackson serializer; for a rolling upgrade from such a build,
 * see docs/cluster.md.
 */
public final class CodeEntrySerializer extends SerializerWithStringManifest {
  /** The serializer's id on the wire; fixed for good once released. */
  static final int IDENTIFIER = 741_001;
  private static final String V1 = "E1";

  private final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;

  public CodeEntrySerializer(ExtendedActorSystem system) {
    this.system = system;
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    return V1;
  }

  @Override
  public byte[] toBinary(Object o) {
    if (!(o instanceof CodeStore.Entry entry)) {
      throw new IllegalArgumentException("not a code entry: " + o.getClass());
    }
    CodeGrant grant = entry.grant();
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(96 + grant.topic().length() + grant.bookingId().length());
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeUTF(grant.topic());
      out.writeByte(grant.scopes().size());
      for (String scope : grant.scopes()) {
        out.writeUTF(scope);
      }
      out.writeUTF(grant.bookingId());
      out.writeLong(grant.tokenExpiresAt());
      out.writeLong(grant.codeExpiresAt());
      out.writeUTF(resolver().toSerializationFormat(entry.issuer()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    if (!V1.equals(manifest)) {
      throw new NotSerializableException("code entry of unknown layout " + manifest);
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      String topic = in.readUTF();
      int count = in.readUnsignedByte();
      List<String> scopes = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        scopes.add(in.readUTF());
      }
      String bookingId = in.readUTF();
      long tokenExpiresAt = in.readLong();
      long codeExpiresAt = in.readLong();
      String issuer = in.readUTF();
      return new CodeStore.Entry(
          new CodeGrant(topic, List.copyOf(scopes), bookingId, tokenExpiresAt, codeExpiresAt), resolver().resolveActorRef(issuer));
    } catch (IOException e) {
      throw new NotSerializableException("unreadable code entry: " + e.getMessage());
    }
  }

  /** Resolved on first use: the typed view of the system is not ready while serializers are made. */
  private ActorRefResolver resolver() {
    ActorRefResolver r = resolver;
    if (r == null) {
      r = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = r;
    }
    return r;
  }
}
