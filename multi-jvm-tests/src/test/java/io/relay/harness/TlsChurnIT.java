package io.relay.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.relay.bench.Churn;
import io.relay.node.LoopbackPorts;
import io.relay.testing.TestCertificate;
import io.relay.testing.Tokens;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The churn's byte-for-byte check (relay-bench's {@link Churn}) over TLS: one node serving its
 * access API and relay port with a certificate ({@code RELAY_TLS_CERT}, {@code RELAY_TLS_KEY}),
 * the churn's clients trusting it alone. Frames of up to 40,000 bytes span several TLS records
 * (16 KiB at most each); readers come and go, most ending abruptly, some stop reading for a
 * while, sessions end and new ones start, and bookings are denied and allowed again. Every frame
 * a reader receives must be its own topic's, intact, in order and without a gap, and the node
 * must count no fault in its accounting of relayed buffers.
 */
class TlsChurnIT {
  private static final String SECONDS = "30";

  private final HarnessConfig config = HarnessConfig.fromSystemProperties();
  @TempDir Path dir;

  @Test
  void overTlsNoReaderGetsAFrameItShouldNot() throws Exception {
    TestCertificate certificate = TestCertificate.create(dir);
    // the codes' URIs name the relay port, so it is chosen before the node starts
    int relayPort = LoopbackPorts.free();
    Map<String, String> tls =
        Map.of(
            "RELAY_TLS_CERT", certificate.cert().toString(),
            "RELAY_TLS_KEY", certificate.key().toString(),
            "RELAY_PORT_RELAY", Integer.toString(relayPort));
    Map<String, Object> result;
    double faults;
    try (RelayCluster cluster = new RelayCluster(config, "wss://127.0.0.1:" + relayPort, tls).start(1)) {
      NodeProcess node = cluster.running().get(0);
      String[] args = {
        "--access", "https://127.0.0.1:" + node.accessPort, "--tls-ca", certificate.cert().toString(),
        "--secret", Tokens.SECRET, "--audience", Tokens.AUDIENCE, "--seconds", SECONDS,
        "--topics", "10", "--readers", "3", "--rate", "20", "--min-bytes", "64", "--max-bytes", "40000",
        "--min-life-ms", "500", "--max-life-ms", "5000", "--abrupt", "0.4", "--slow", "0.2", "--slow-ms", "3000",
        "--session-seconds", "15", "--deny-every", "10", "--deny-for", "2"
      };
      result = CommandLine.populateCommand(new Churn(), args).churn();
      faults = node.metric("relay_buffer_faults_total");
      LogHygiene.assertClean(cluster.logs());
    }
    System.out.println("tls churn: " + result);
    assertTrue(((Number) result.get("framesReceived")).longValue() > 0, "readers received frames: " + result);
    assertTrue(((Number) result.get("closedByDeny")).longValue() > 0, "a deny closed connections: " + result);
    SoakIT.assertEveryFrameIntact(result);
    assertEquals(0.0, faults, "buffer accounting faults counted by the node");
  }
}
