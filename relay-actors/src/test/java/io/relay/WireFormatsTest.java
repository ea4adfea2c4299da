package io.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonPointer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.cbor.databind.CBORMapper;
import io.relay.WireFixtures.Fixture;
import io.relay.WireSamples.Sample;
import io.relay.testing.TestClusterConfig;
import java.io.NotSerializableException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import scala.util.Try;

/**
 * Every message and replicated value that crosses nodes is written exactly as its recorded golden
 * bytes say, under the serializer and manifest recorded with them, and every recorded version is
 * read by this version: the one it writes back into an equal value, older ones into a value or a
 * clean refusal. A change that alters a format fails here until the format gets a new manifest and
 * its bytes are recorded as a new version (docs/cluster.md, "Wire formats and versions").
 *
 * <p>{@code -Drelay.wire.record=true} records what is missing: a first version for a sample
 * without fixtures, and a new version for a sample now written under a manifest none of its
 * fixtures has. It never overwrites a fixture, and a default run writes nothing.
 */
class WireFormatsTest {
  private static final ActorTestKit KIT = ActorTestKit.create("relay", TestClusterConfig.get());
  private static final Serialization SERIALIZATION = SerializationExtension.get(Adapter.toClassic(KIT.system()));
  private static final List<Sample> SAMPLES = WireSamples.all(ActorRefResolver.get(KIT.system()));
  private static final WireFixtures FIXTURES = WireFixtures.of(WireFormatsTest.class);
  private static final boolean RECORD = Boolean.getBoolean("relay.wire.record");
  /** A manifest no serializer of this version knows: what a newer version's changed format looks like here. */
  private static final String UNKNOWN_MANIFEST = "io.relay.FromANewerVersion";

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @TestFactory
  Stream<DynamicTest> everyFormatIsWrittenAsRecordedAndEveryRecordedVersionIsRead() {
    return SAMPLES.stream().map(sample -> DynamicTest.dynamicTest(sample.name(), () -> check(sample)));
  }

  @Test
  void everyTypeBoundToASerializerHasASample() {
    List<String> missing = new ArrayList<>();
    for (Class<?> type : WireTypes.bound(KIT.system().settings().config())) {
      if (SAMPLES.stream().noneMatch(sample -> sample.type() == type)) {
        missing.add(type.getName());
      }
    }
    assertEquals(List.of(), missing,
        "types bound to a serializer without a sample in WireSamples (add one, then record its fixture with -Drelay.wire.record=true)");
  }

  @Test
  void noOtherModuleDeclaresTypesThatCrossNodes() {
    assertEquals(List.of(), WireTypes.declaredOutsideThisModule(FIXTURES.dir()),
        "types that cross nodes live in relay-actors, where WireFormatsTest holds them to their fixtures");
  }

  @Test
  void aManifestFromANewerVersionIsRefusedCleanly() {
    Map<Integer, Serializer> serializers = new LinkedHashMap<>();
    for (Sample sample : SAMPLES) {
      Serializer serializer = SERIALIZATION.findSerializerFor(sample.value());
      serializers.putIfAbsent(serializer.identifier(), serializer);
    }
    for (Serializer serializer : serializers.values()) {
      Try<Object> read = SERIALIZATION.deserialize(new byte[] {1, 2, 3}, serializer.identifier(), UNKNOWN_MANIFEST);
      assertTrue(read.isFailure(), serializer.getClass().getName() + " read a manifest it does not know: " + read);
      assertInstanceOf(NotSerializableException.class, read.failed().get(),
          serializer.getClass().getName() + " refuses an unknown manifest with NotSerializableException, which Artery logs and drops");
    }
  }

  /**
   * The fields a message from another node must carry (JSON pointers into its CBOR): without one
   * it is refused, never handed to an actor as a null.
   */
  private static final Map<Class<?>, List<String>> REQUIRED =
      Map.of(
          io.relay.deny.Cancel.class, List.of("/bookingId"),
          io.relay.deny.ListChange.class, List.of("/bookingId", "/state", "/replyTo"),
          io.relay.deny.ListChange.Confirmed.class, List.of("/node"),
          io.relay.topic.TopicRegistry.Report.class, List.of("/replyTo"),
          io.relay.topic.TopicRegistry.NodeReport.class,
          List.of("/node", "/connections", "/events", "/connections/0/scopes", "/connections/0/stats", "/connections/0/stats/tx",
              "/events/0/at"));

  @Test
  void aMessageWithoutAFieldItsHandlerNeedsIsRefusedAsItIsRead() throws Exception {
    CBORMapper cbor = new CBORMapper();
    int checked = 0;
    for (Sample sample : SAMPLES) {
      List<String> required = REQUIRED.get(sample.type());
      if (required == null) {
        continue;
      }
      Serializer serializer = SERIALIZATION.findSerializerFor(sample.value());
      String manifest = Serializers.manifestFor(serializer, sample.value());
      byte[] whole = SERIALIZATION.serialize(sample.value()).get();
      for (String field : required) {
        JsonNode tree = cbor.readTree(whole);
        JsonPointer pointer = JsonPointer.compile(field);
        assertTrue(!tree.at(pointer).isMissingNode(), sample.name() + " writes " + field);
        ((ObjectNode) tree.at(pointer.head())).remove(pointer.last().getMatchingProperty());
        Try<Object> read = SERIALIZATION.deserialize(cbor.writeValueAsBytes(tree), serializer.identifier(), manifest);
        assertTrue(read.isFailure(), sample.name() + " without " + field + " is refused, not read as " + read);
        checked++;
      }
    }
    assertEquals(REQUIRED.values().stream().mapToInt(List::size).sum(), checked, "every required field of every such message was checked");
  }

  private static void check(Sample sample) {
    Serializer serializer = SERIALIZATION.findSerializerFor(sample.value());
    Fixture now = new Fixture(0, serializer.identifier(), Serializers.manifestFor(serializer, sample.value()),
        SERIALIZATION.serialize(sample.value()).get());
    List<Fixture> versions = FIXTURES.versions(sample.name());
    Fixture latest = versions.isEmpty() ? null : versions.get(versions.size() - 1);
    if (latest != null && sameFormat(latest, now)) {
      assertSameBytes(sample, latest, now);
    } else {
      for (Fixture older : versions) {
        if (sameFormat(older, now)) {
          fail(sample.name() + " is written as v" + older.version() + " (" + describe(now)
              + ") again, after v" + latest.version() + ": a manifest is never reused for another layout");
        }
      }
      int version = latest == null ? 1 : latest.version() + 1;
      if (!RECORD) {
        fail(sample.name() + " is written as " + describe(now) + ", which no fixture in " + FIXTURES.dir()
            + " records; record it as v" + version + " with -Drelay.wire.record=true");
      }
      Fixture recorded = new Fixture(version, now.serializer(), now.manifest(), now.bytes());
      System.out.println("recorded " + FIXTURES.write(sample.name(), recorded, serializer.getClass().getName()));
      versions = FIXTURES.versions(sample.name());
    }
    for (Fixture fixture : versions) {
      Try<Object> read = SERIALIZATION.deserialize(fixture.bytes(), fixture.serializer(), fixture.manifest());
      if (fixture == versions.get(versions.size() - 1)) {
        assertEquals(sample.value(), read.get(), sample.name() + " v" + fixture.version() + " reads back into the sample");
      } else if (read.isSuccess()) {
        assertInstanceOf(sample.type(), read.get(), sample.name() + " v" + fixture.version() + " still reads");
      } else {
        assertInstanceOf(NotSerializableException.class, read.failed().get(),
            sample.name() + " v" + fixture.version() + " is either read or refused cleanly");
      }
    }
  }

  private static boolean sameFormat(Fixture a, Fixture b) {
    return a.serializer() == b.serializer() && a.manifest().equals(b.manifest());
  }

  private static void assertSameBytes(Sample sample, Fixture recorded, Fixture now) {
    byte[] expected = WireFixtures.comparable(recorded.bytes());
    byte[] actual = WireFixtures.comparable(now.bytes());
    if (!Arrays.equals(expected, actual)) {
      fail(sample.name() + " is written differently from its v" + recorded.version() + " under the same " + describe(now)
          + " (" + actual.length + " bytes against " + expected.length + ", first difference at byte "
          + Arrays.mismatch(expected, actual) + "). A changed format needs a new manifest that the nodes of this "
          + "version refuse cleanly or read, and its bytes recorded as v" + (recorded.version() + 1)
          + " (docs/cluster.md, \"Wire formats and versions\")");
    }
  }

  private static String describe(Fixture fixture) {
    return "serializer " + fixture.serializer() + ", manifest '" + fixture.manifest() + "'";
  }
}
