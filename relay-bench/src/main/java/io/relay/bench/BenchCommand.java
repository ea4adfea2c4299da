package io.relay.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code java -jar relay-bench.jar}: the load generator of docs/benchmarks.md. It drives one workload (W1 to W6)
 * against a relay node (through its access API) or nginx+nchan, prints the figures, and appends
 * them as one JSON line to {@code --json}.
 */
@Command(
    name = "relay-bench",
    mixinStandardHelpOptions = true,
    description = "Load generator: run workload W1..W6 against a relay node or nginx+nchan on loopback.")
public final class BenchCommand implements Callable<Integer> {
  /**
   * The key a node without {@code RELAY_SECRET} checks tokens against: its documented development
   * key ({@code io.relay.http.HttpSettings.DEV_SECRET}; {@code BenchSmokeTest} keeps the two equal).
   */
  static final String DEV_SECRET = "relay-development-secret-do-not-use-in-production";

  @Option(names = "--target", defaultValue = "relay", description = "relay or nchan (default: ${DEFAULT-VALUE}).")
  String target;

  @Option(names = "--label", description = "Name of the server configuration in the results (default: the target).")
  String label;

  @Option(names = "--workload", defaultValue = "W1", description = "W1 video fan-out, W2 chat, W3 one stream, W4 saturation, W5 idle capacity, W6 connect storm.")
  String workload;

  @Option(names = "--duration", defaultValue = "10", description = "Measured seconds (W1-W3) (default: ${DEFAULT-VALUE}).")
  double duration;

  @Option(names = "--warmup", defaultValue = "3", description = "Unmeasured seconds before measuring (default: ${DEFAULT-VALUE}).")
  double warmup;

  @Option(names = "--step-seconds", defaultValue = "5", description = "Measured seconds per W4 step (default: ${DEFAULT-VALUE}).")
  double stepSeconds;

  @Option(names = "--rates", split = ",", description = "W4 rates per topic, frames/s (default: 25,50,100,200,300,400).")
  List<Double> rates;

  @Option(names = "--overload", defaultValue = "true", negatable = true, description = "W4: also run twice the highest passing rate.")
  boolean overload;

  @Option(names = "--topics", description = "Override the workload's number of topics.")
  Integer topics;

  @Option(names = "--connections", description = "W5: idle connections to open (default: 10000); W6: participants to admit (default: 3000).")
  Integer connections;

  @Option(names = "--concurrency", defaultValue = "64", description = "W6: participants being admitted at once (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(names = "--admission-rate", defaultValue = "0", description = "W6: participants started per second; 0 = as fast as --concurrency allows (default: ${DEFAULT-VALUE}).")
  double admissionRate;

  @Option(
      names = "--storm-id",
      description = "W6: when the storm was first run, in seconds since the epoch: names its topics and dates its tokens, so "
          + "storms with the same id are the same participants coming back with the tokens they had (default: a new storm).")
  Long stormId;

  @Option(
      names = "--storms",
      defaultValue = "1",
      description = "W6: measured storms, each the same participants coming back, in this one JVM (default: ${DEFAULT-VALUE}).")
  int storms;

  @Option(
      names = "--warmup-storms",
      defaultValue = "0",
      description = "W6: unreported storms of the same participants before the measured ones, so that the generator's own code "
          + "is compiled before it measures (default: ${DEFAULT-VALUE}).")
  int warmupStorms;

  @Option(names = "--loops", defaultValue = "2", description = "Generator threads (default: ${DEFAULT-VALUE}).")
  int loops;

  @Option(names = "--window", defaultValue = "32", description = "W3: frames in flight between writer and reader (default: ${DEFAULT-VALUE}).")
  int window;

  @Option(names = "--access", split = ",", defaultValue = "http://127.0.0.1:3000", description = "Relay access API; W6 spreads its requests over several, comma-separated (default: ${DEFAULT-VALUE}).")
  List<URI> access;

  @Option(names = "--nchan", defaultValue = "http://127.0.0.1:8090", description = "nginx+nchan base URL; https means wss (default: ${DEFAULT-VALUE}).")
  URI nchan;

  private Tls tls;

  @Option(names = "--tls-ca", description = "PEM certificate to trust for https and wss (the servers' own, self-signed).")
  Path tlsCa;

  @Option(names = "--tls-suite", defaultValue = Tls.DEFAULT_SUITE, description = "The one TLS 1.3 cipher suite every connection must negotiate (default: ${DEFAULT-VALUE}).")
  String tlsSuite;

  @Mixin NodeKey node;

  @Option(names = "--server-pid", split = ",", description = "Server process ids (children included) whose CPU and memory are reported.")
  List<Long> serverPids = new ArrayList<>();

  @Option(names = "--jvm-pid", description = "The server JVM's pid, for its heap (jcmd).")
  Long jvmPid;

  @Option(names = "--metrics", description = "The relay's Prometheus endpoint, for its drop counter (e.g. http://127.0.0.1:8558/metrics).")
  URI metrics;

  @Option(names = "--json", description = "Append the result as one JSON line to this file.")
  Path json;

  @Option(names = "--p99-limit-ms", defaultValue = "100", description = "W4 pass limit on p99 (default: ${DEFAULT-VALUE}).")
  double p99LimitMs;

  @Option(names = "--min-delivery", defaultValue = "0.95", description = "W4 pass limit on delivered/expected (default: ${DEFAULT-VALUE}).")
  double minDelivery;

  public static void main(String[] args) {
    System.exit(new CommandLine(new BenchCommand()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Workload w = Workload.named(workload);
    if (topics != null) {
      w = w.withTopics(topics);
    }
    if (rates != null && !rates.isEmpty()) {
      w = w.withSteps(rates);
    }
    if (w.shape() != Workload.Shape.TRAFFIC && connections != null) {
      w = w.withTopics(Math.max(1, connections / w.connectionsPerTopic()));
    }
    Endpoints endpoints =
        switch (target) {
          case "relay" -> new Endpoints.Relay(access.get(0), node.secret(), node.audience, tls());
          case "nchan" -> new Endpoints.Nchan(nchan);
          default -> throw new IllegalArgumentException("--target must be relay or nchan");
        };
    boolean secure = "https".equals((target.equals("relay") ? access.get(0) : nchan).getScheme());
    if (secure && tls() == null) {
      throw new IllegalArgumentException("an https server needs --tls-ca");
    }
    ServerProbe probe = new ServerProbe(serverPids, jvmPid, metrics);
    if (w.shape() == Workload.Shape.STORM && !(endpoints instanceof Endpoints.Relay)) {
      throw new IllegalArgumentException("W6 needs the relay's access API (--target relay)");
    }
    boolean storm = w.shape() == Workload.Shape.STORM;
    if (storm && (storms < 1 || warmupStorms < 0)) {
      throw new IllegalArgumentException("--storms must be at least 1 and --warmup-storms at least 0");
    }
    if (storm && stormId == null) {
      stormId = System.currentTimeMillis() / 1000;
    }
    int runs = storm ? warmupStorms + storms : 1;
    for (int i = 0; i < runs; i++) {
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("target", target);
      result.put("label", label == null ? target : label);
      result.put("workload", w.name());
      result.put("transport", secure ? "wss" : "ws");
      result.put("cores", Runtime.getRuntime().availableProcessors());
      result.put("loops", loops);
      result.putAll(new BenchRun(w, endpoints, probe, this).execute());
      if (!storm || i >= warmupStorms) {
        report(result, json);
      }
    }
    return 0;
  }

  /** Prints {@code result} as JSON and appends it as one line to {@code json}, if given. */
  static void report(Map<String, Object> result, Path json) throws IOException {
    ObjectMapper mapper = new ObjectMapper();
    System.out.println(mapper.copy().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(result));
    if (json != null) {
      Files.writeString(
          json,
          mapper.writeValueAsString(result) + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    }
  }

  /** The TLS client of an https/wss run, or null without {@code --tls-ca}. */
  Tls tls() {
    if (tls == null && tlsCa != null) {
      tls = Tls.trusting(tlsCa, tlsSuite);
    }
    return tls;
  }

  /** A shared read-only filler of {@code size} bytes for frame payloads. */
  static ByteBuffer filler(int size) {
    ByteBuffer b = ByteBuffer.allocateDirect(Math.max(size, 1));
    for (int i = 0; i < size; i++) {
      b.put((byte) ('a' + i % 26));
    }
    b.flip();
    return b.asReadOnlyBuffer();
  }
}
