package io.relay.codes;

import io.relay.WireFormat;
import io.relay.WireSerializer;
import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import org.apache.pekko.actor.ExtendedActorSystem;

/**
 * The wire form of the claim a redeeming node sends a code's issuer and of the issuer's answer
 * ({@link CodeStore.Claim}, {@link CodeStore.ClaimAnswer}): one of each per admission whose code
 * another node issued. A claim is the code, its expiry and the reply's actor path; an answer is
 * one byte. No class or field names.
 *
 * <p>Manifests {@code C1} (claim) and {@code R1} (answer) are these layouts.
 */
public final class CodeClaimSerializer extends WireSerializer {
  /** The serializer's id on the wire; fixed for good once released. */
  static final int IDENTIFIER = 741_004;
  private static final String CLAIM = "C1";
  private static final String ANSWER = "R1";

  public CodeClaimSerializer(ExtendedActorSystem system) {
    super(system, IDENTIFIER, CLAIM);
  }

  @Override
  public String manifest(Object o) {
    return o instanceof CodeStore.ClaimAnswer ? ANSWER : super.manifest(expect(o, CodeStore.Claim.class));
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof CodeStore.ClaimAnswer answer) {
      return new byte[] {(byte) (answer.granted() ? 1 : 0)};
    }
    CodeStore.Claim claim = expect(o, CodeStore.Claim.class);
    String replyTo = resolver().toSerializationFormat(claim.replyTo());
    return WireFormat.bytes(128, out -> {
      WireFormat.writeString(out, claim.code());
      out.writeLong(claim.expiresAt());
      WireFormat.writeString(out, replyTo);
    });
  }

  @Override
  protected Object read(String manifest, ByteBuffer in) throws NotSerializableException {
    if (ANSWER.equals(manifest)) {
      return new CodeStore.ClaimAnswer(in.get() != 0);
    }
    if (!CLAIM.equals(manifest)) {
      throw unknownLayout(manifest);
    }
    String code = WireFormat.readString(in);
    long expiresAt = in.getLong();
    return new CodeStore.Claim(code, expiresAt, resolver().resolveActorRef(WireFormat.readString(in)));
  }
}
