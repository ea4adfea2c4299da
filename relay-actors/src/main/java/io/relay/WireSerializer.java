package io.relay;

import java.io.NotSerializableException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * What the relay's own Pekko serializers (code shards, claims) share: an identifier fixed for good
 * once released, actor references written as their paths, bytes in {@link WireFormat}, and one
 * answer to bytes they cannot read. Each manifest names one layout; a changed layout gets a new
 * manifest, and the serializer keeps reading the old ones.
 */
public abstract class WireSerializer extends SerializerWithStringManifest {
  private final int identifier;
  private final String manifest;
  private final ExtendedActorSystem system;

  /**
   * A serializer of one layout, {@code manifest}, under {@code identifier} (Pekko reserves 0 to
   * 40 for its own).
   */
  protected WireSerializer(ExtendedActorSystem system, int identifier, String manifest) {
    if (identifier <= 40) {
      throw new IllegalArgumentException("serializer identifiers up to 40 are Pekko's: " + identifier);
    }
    this.identifier = identifier;
    this.manifest = manifest;
    this.system = system;
  }

  @Override
  public final int identifier() {
    return identifier;
  }

  @Override
  public String manifest(Object o) {
    return manifest;
  }

  @Override
  public final Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    try {
      return read(manifest, ByteBuffer.wrap(bytes));
    } catch (BufferUnderflowException | IndexOutOfBoundsException | IllegalArgumentException e) {
      throw new NotSerializableException("unreadable " + manifest + " of serializer " + identifier + ": " + e);
    }
  }

  /**
   * The message of layout {@code manifest} in {@code in}; {@link #unknownLayout} for a manifest
   * this serializer does not know. Truncated or malformed bytes may fail as reading a buffer fails.
   */
  protected abstract Object read(String manifest, ByteBuffer in) throws NotSerializableException;

  protected final NotSerializableException unknownLayout(String manifest) {
    return new NotSerializableException("layout " + manifest + " unknown to serializer " + identifier);
  }

  private volatile ActorRefResolver resolver;

  /** Resolved on first use: the typed view of the system is not ready while serializers are made. */
  protected final ActorRefResolver resolver() {
    ActorRefResolver r = resolver;
    if (r == null) {
      r = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = r;
    }
    return r;
  }

  /** {@code o} as a {@code type}, or an error naming what this serializer was given instead. */
  protected static <T> T expect(Object o, Class<T> type) {
    if (!type.isInstance(o)) {
      throw new IllegalArgumentException("not a " + type.getSimpleName() + ": " + o.getClass());
    }
    return type.cast(o);
  }
}
