package io.relay.codes;

import io.relay.WireStrings;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.NotSerializableException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * The wire form of the claim a redeeming node sends a code's issuer and of the issuer's answer
 * ({@link CodeStore.Claim}, {@link CodeStore.ClaimAnswer}): one of each per admission whose code
 * another node issued. A claim is the code, its expiry and the reply's actor path; an answer is
 * one byte. No class or field names.
 *
 * <p>Manifests {@code C1} (claim) and {@code R1} (answer) are these layouts; a changed layout gets
 * a new manifest, and this serializer keeps reading the old ones.
 */
public final class CodeClaimSerializer extends SerializerWithStringManifest {
  /** The serializer's id on the wire; fixed for good once released. */
  static final int IDENTIFIER = 741_004;
  private static final String CLAIM = "C1";
  private static final String ANSWER = "R1";

  private final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;

  public CodeClaimSerializer(ExtendedActorSystem system) {
    this.system = system;
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof CodeStore.Claim) {
      return CLAIM;
    }
    if (o instanceof CodeStore.ClaimAnswer) {
      return ANSWER;
    }
    throw new IllegalArgumentException("not a code claim: " + o.getClass());
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof CodeStore.ClaimAnswer answer) {
      return new byte[] {(byte) (answer.granted() ? 1 : 0)};
    }
    if (!(o instanceof CodeStore.Claim claim)) {
      throw new IllegalArgumentException("not a code claim: " + o.getClass());
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      WireStrings.write(out, claim.code());
      out.writeLong(claim.expiresAt());
      WireStrings.write(out, resolver().toSerializationFormat(claim.replyTo()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    try {
      if (ANSWER.equals(manifest)) {
        return new CodeStore.ClaimAnswer(bytes[0] != 0);
      }
      if (!CLAIM.equals(manifest)) {
        throw new NotSerializableException("code claim of unknown layout " + manifest);
      }
      ByteBuffer in = ByteBuffer.wrap(bytes);
      String code = WireStrings.read(in);
      long expiresAt = in.getLong();
      return new CodeStore.Claim(code, expiresAt, resolver().resolveActorRef(WireStrings.read(in)));
    } catch (BufferUnderflowException | IndexOutOfBoundsException | IllegalArgumentException e) {
      throw new NotSerializableException("unreadable code claim: " + e);
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
