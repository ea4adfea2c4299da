package io.relay.codes;

import io.relay.WireFormat;
import io.relay.WireSerializer;
import java.io.NotSerializableException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The replicated form of a {@link CodeShard}: its horizon, the issuers its entries name (each once,
 * as its actor path), then each code with its grant's fields in a fixed order ({@link
 * CodeEntry#wire}) and its issuer's index; strings as UTF-8 after their length, no class or field
 * names. Distributed Data serialises a shard again for every delta, digest and gossip round, so
 * this form is what a code costs to replicate: an entry's bytes are made once and copied after.
 *
 * <p>Manifest {@code S1} is this layout.
 */
public final class CodeShardSerializer extends WireSerializer {
  /** The serializer's id on the wire; fixed for good once released. */
  static final int IDENTIFIER = 741_002;
  private static final String V1 = "S1";

  private final Map<ActorRef<CodeStore.Command>, byte[]> issuerPaths = new ConcurrentHashMap<>();
  private static final int MAX_ISSUER_PATHS = 256;

  public CodeShardSerializer(ExtendedActorSystem system) {
    super(system, IDENTIFIER, V1);
  }

  @Override
  public byte[] toBinary(Object o) {
    CodeShard shard = expect(o, CodeShard.class);
    Map<ActorRef<CodeStore.Command>, Integer> issuers = new LinkedHashMap<>();
    int size = 16;
    for (Map.Entry<String, CodeEntry> e : shard.entries().entrySet()) {
      issuers.putIfAbsent(e.getValue().issuer(), issuers.size());
      size += 6 + e.getKey().length() + e.getValue().wire().length;
    }
    int issuerCount = issuers.size();
    return WireFormat.bytes(size + 96 * issuerCount, out -> {
      out.writeLong(shard.horizon());
      out.writeShort(issuerCount);
      for (ActorRef<CodeStore.Command> issuer : issuers.keySet()) {
        out.write(issuerPath(issuer));
      }
      out.writeInt(shard.entries().size());
      for (Map.Entry<String, CodeEntry> e : shard.entries().entrySet()) {
        WireFormat.writeString(out, e.getKey());
        byte[] wire = e.getValue().wire();
        out.writeShort(wire.length);
        out.write(wire);
        out.writeShort(issuers.get(e.getValue().issuer()));
      }
    });
  }

  @Override
  protected Object read(String manifest, ByteBuffer in) throws NotSerializableException {
    if (!V1.equals(manifest)) {
      throw unknownLayout(manifest);
    }
    long horizon = in.getLong();
    int issuerCount = Short.toUnsignedInt(in.getShort());
    List<ActorRef<CodeStore.Command>> issuers = new ArrayList<>(issuerCount);
    for (int i = 0; i < issuerCount; i++) {
      issuers.add(resolver().resolveActorRef(WireFormat.readString(in)));
    }
    int count = in.getInt();
    Map<String, CodeEntry> entries = new TreeMap<>();
    for (int i = 0; i < count; i++) {
      String code = WireFormat.readString(in);
      byte[] wire = new byte[Short.toUnsignedInt(in.getShort())];
      in.get(wire);
      entries.put(code, CodeEntry.read(wire, issuers.get(Short.toUnsignedInt(in.getShort()))));
    }
    return new CodeShard(Collections.unmodifiableMap(entries), horizon, null);
  }

  /** An issuer's actor path as written, kept per issuer: a cluster has few, one per node incarnation. */
  private byte[] issuerPath(ActorRef<CodeStore.Command> issuer) {
    byte[] path = issuerPaths.get(issuer);
    if (path == null) {
      String serialized = resolver().toSerializationFormat(issuer);
      path = WireFormat.bytes(96, out -> WireFormat.writeString(out, serialized));
      if (issuerPaths.size() >= MAX_ISSUER_PATHS) {
        issuerPaths.clear();
      }
      issuerPaths.put(issuer, path);
    }
    return path;
  }
}
