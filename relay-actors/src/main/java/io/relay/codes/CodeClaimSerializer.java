package io.relay.codes;

import io.relay.WireFormat;
import io.relay.WireSerializer;
import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import org.apache.pekko.actor.ExtendedActorSystem;

/**
 * The wire form of the claims a redeeming node sends a code's issuer and of the issuer's answers:
 * one of each per admission whose code another node issued. A claim of a code the redeemer's
 * replica holds ({@link CodeStore.Claim}) is the code, its expiry and the reply's actor path, its
 * answer ({@link CodeStore.ClaimAnswer}) one byte. A claim of a code the redeemer has not seen yet
 * ({@link CodeStore.ClaimUnseen}) is the code, the topic and the reply's actor path; its answer is
 * what the code grants ({@link CodeStore.Redeemed}, the grant as the code shards write it) or why
 * not ({@link CodeStore.Rejected}, one byte). No class or field names.
 *
 * <p>Manifests {@code C1} (claim), {@code R1} (answer), {@code U1} (claim of an unseen code),
 * {@code G1} (grant) and {@code J1} (refusal) are these layouts.
 */
public final class CodeClaimSerializer extends WireSerializer {
  /** The serializer's id on the wire; fixed for good once released. */
  static final int IDENTIFIER = 741_004;
  private static final String CLAIM = "C1";
  private static final String ANSWER = "R1";
  private static final String CLAIM_UNSEEN = "U1";
  private static final String REDEEMED = "G1";
  private static final String REJECTED = "J1";
  /** The refusals by their byte on the wire; a new reason goes at the end. */
  private static final CodeStore.Reason[] REASONS = CodeStore.Reason.values();

  public CodeClaimSerializer(ExtendedActorSystem system) {
    super(system, IDENTIFIER, CLAIM);
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof CodeStore.ClaimAnswer) {
      return ANSWER;
    } else if (o instanceof CodeStore.ClaimUnseen) {
      return CLAIM_UNSEEN;
    } else if (o instanceof CodeStore.Redeemed) {
      return REDEEMED;
    } else if (o instanceof CodeStore.Rejected) {
      return REJECTED;
    }
    return super.manifest(expect(o, CodeStore.Claim.class));
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof CodeStore.ClaimAnswer answer) {
      return new byte[] {(byte) (answer.granted() ? 1 : 0)};
    } else if (o instanceof CodeStore.Redeemed redeemed) {
      return CodeEntry.encode(redeemed.grant());
    } else if (o instanceof CodeStore.Rejected rejected) {
      return new byte[] {(byte) rejected.reason().ordinal()};
    } else if (o instanceof CodeStore.ClaimUnseen claim) {
      String replyTo = resolver().toSerializationFormat(claim.replyTo());
      return WireFormat.bytes(128 + claim.topic().length(), out -> {
        WireFormat.writeString(out, claim.code());
        WireFormat.writeString(out, claim.topic());
        WireFormat.writeString(out, replyTo);
      });
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
    switch (manifest) {
      case ANSWER:
        return new CodeStore.ClaimAnswer(in.get() != 0);
      case REDEEMED:
        return new CodeStore.Redeemed(CodeEntry.decode(in));
      case REJECTED:
        int reason = Byte.toUnsignedInt(in.get());
        if (reason >= REASONS.length) {
          throw new NotSerializableException("a refusal this node does not know: " + reason);
        }
        return new CodeStore.Rejected(REASONS[reason]);
      case CLAIM_UNSEEN:
        String unseen = WireFormat.readString(in);
        String topic = WireFormat.readString(in);
        return new CodeStore.ClaimUnseen(unseen, topic, resolver().resolveActorRef(WireFormat.readString(in)));
      case CLAIM:
        String code = WireFormat.readString(in);
        long expiresAt = in.getLong();
        return new CodeStore.Claim(code, expiresAt, resolver().resolveActorRef(WireFormat.readString(in)));
      default:
        throw unknownLayout(manifest);
    }
  }
}
