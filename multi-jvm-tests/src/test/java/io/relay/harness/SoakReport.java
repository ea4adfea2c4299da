package io.relay.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * What a soak ({@link SoakIT}) saw: the churn's frame counts, each node's samples over time, the
 * slope of each resource over the second half of the run, the heap's lowest samples quarter by
 * quarter, and the classes of live objects that grew in the second half, as Markdown.
 */
final class SoakReport {
  /** One node's resources at one moment, after a full GC. */
  record Sample(double minute, String node, double upSinceMinute, double heapMiB, double rssMiB, double fds, double threads, double topics) {}

  /** How many classes the report lists per node run. */
  private static final int GROWN = 12;

  private final Duration length;
  private final Duration killEvery;
  private final Duration sampleEvery;
  private final String workload;
  private final List<Sample> samples = new ArrayList<>();
  private final List<String> kills = new ArrayList<>();
  private Map<String, Object> result = Map.of();
  /** Per node run, its first sample counted toward the slopes and its latest, with their live histograms. */
  private final Map<String, Map.Entry<Sample, ClassHistogram>> firstLive = new LinkedHashMap<>();
  private final Map<String, Map.Entry<Sample, ClassHistogram>> lastLive = new LinkedHashMap<>();

  SoakReport(Duration length, Duration killEvery, Duration sampleEvery, String workload) {
    this.length = length;
    this.killEvery = killEvery;
    this.sampleEvery = sampleEvery;
    this.workload = workload;
  }

  /**
   * A node's sample at {@code atNanos} into the run, the node up since {@code upSinceNanos}, with
   * the histogram of its live objects; a node run's first histogram in the second half (after its
   * warm-up) and its latest are kept.
   */
  synchronized void sample(long atNanos, String node, long upSinceNanos, ClassHistogram live, double heapBytes, double rssBytes, double fds, double threads, double topics) {
    Sample sample = new Sample(minutes(atNanos), node, minutes(upSinceNanos), heapBytes / (1 << 20), rssBytes / (1 << 20), fds, threads, topics);
    samples.add(sample);
    if (counts(sample)) {
      firstLive.putIfAbsent(run(sample), Map.entry(sample, live));
      lastLive.put(run(sample), Map.entry(sample, live));
    }
  }

  synchronized void killed(long atNanos, String node) {
    kills.add(String.format("%s at minute %.1f", node, minutes(atNanos)));
  }

  synchronized void result(Map<String, Object> churn) {
    this.result = churn;
  }

  /**
   * A node's samples count toward its slope once it has run for a sixth of the run (20 minutes at
   * most): its warm-up (JIT, the first topics, pools filling) is not a leak.
   */
  Duration warmUp() {
    return length.dividedBy(6).compareTo(Duration.ofMinutes(20)) < 0 ? length.dividedBy(6) : Duration.ofMinutes(20);
  }

  /**
   * Per node run (a node's name and when it started), the least-squares slope per hour of each
   * resource over its samples in the second half of the run taken after its warm-up; only runs with
   * at least three such samples.
   */
  synchronized Map<String, double[]> slopes() {
    Map<String, List<Sample>> byRun = new LinkedHashMap<>();
    for (Sample s : samples) {
      if (counts(s)) {
        byRun.computeIfAbsent(run(s), k -> new ArrayList<>()).add(s);
      }
    }
    Map<String, double[]> slopes = new LinkedHashMap<>();
    byRun.forEach((run, list) -> {
      if (list.size() >= 3) {
        slopes.put(run, new double[] {
          list.size(), perHour(list, Sample::heapMiB), perHour(list, Sample::rssMiB), perHour(list, Sample::fds), perHour(list, Sample::threads)
        });
      }
    });
    return slopes;
  }

  /** The length of the four windows whose lowest heap samples {@link #troughs} lists: a quarter of the run. */
  Duration troughWindow() {
    return length.dividedBy(4);
  }

  /**
   * Per node run, the lowest heap after GC (MiB) in each quarter of the run ({@link #troughWindow},
   * numbered from 0) that its samples past its warm-up reach; only runs with samples in two
   * quarters or more.
   */
  synchronized Map<String, Map<Integer, Double>> troughs() {
    double window = troughWindow().toSeconds() / 60.0;
    double warm = warmUp().toSeconds() / 60.0;
    Map<String, Map<Integer, Double>> byRun = new LinkedHashMap<>();
    for (Sample s : samples) {
      if (s.minute() - s.upSinceMinute() >= warm) {
        int quarter = Math.min(3, (int) (s.minute() / window)); // the sample at the very end belongs to the last
        byRun.computeIfAbsent(run(s), k -> new java.util.TreeMap<>()).merge(quarter, s.heapMiB(), Math::min);
      }
    }
    byRun.values().removeIf(lows -> lows.size() < 2);
    return byRun;
  }

  /** Whether {@code s} is in the second half of the run and its node past its warm-up. */
  private boolean counts(Sample s) {
    return s.minute() >= length.toSeconds() / 120.0 && s.minute() - s.upSinceMinute() >= warmUp().toSeconds() / 60.0;
  }

  /** A node's run: its name and when it started. */
  private static String run(Sample s) {
    return String.format("%s (up since minute %.1f)", s.node(), s.upSinceMinute());
  }

  /** The least-squares slope of {@code value} against time, per hour. */
  static double perHour(List<Sample> points, ToDoubleFunction<Sample> value) {
    double n = points.size();
    double meanX = points.stream().mapToDouble(Sample::minute).sum() / n;
    double meanY = points.stream().mapToDouble(value).sum() / n;
    double covariance = 0;
    double variance = 0;
    for (Sample p : points) {
      covariance += (p.minute() - meanX) * (value.applyAsDouble(p) - meanY);
      variance += (p.minute() - meanX) * (p.minute() - meanX);
    }
    return variance == 0 ? 0 : covariance / variance * 60;
  }

  synchronized String markdown() {
    StringBuilder md = new StringBuilder("# Soak\n\n");
    md.append("Written by `SoakIT` (`multi-jvm-tests/soak` runs it for two hours and writes this page); do not edit.\n\n");
    String build = System.getProperty("relay.soak.build", "");
    if (!build.isBlank()) {
      md.append("Build: `").append(build).append("`. ");
    }
    md.append("Machine: ").append(ScenarioReport.machine()).append(". Three nodes (the harness's JVM options: `-Xmx256m`, the serial collector, the first JIT tier only) behind nginx, ")
        .append("the clients in the test's JVM, all on that machine.\n\n");
    md.append(String.format(
        "%s of `io.relay.bench.Churn %s` through the proxy; a node killed (SIGKILL) and started again every %s; "
            + "every node sampled every %s after a full GC (`jcmd GC.class_histogram`).%n%n",
        spoken(length), workload, spoken(killEvery), spoken(sampleEvery)));
    md.append("## What the readers saw\n\n| | |\n|---|---|\n");
    row(md, "frames sent", "framesSent");
    row(md, "frames received", "framesReceived");
    row(md, "**lost**: missing from a reader that kept reading", "gaps");
    row(md, "**reordered**", "reordered");
    row(md, "**foreign**: another session's frame", "foreign");
    row(md, "**corrupt**: bytes that are no writer's frame", "corrupt");
    row(md, "dropped from slow readers' queues (drop-oldest, by design)", "slowReadersDropped");
    row(md, "sessions started", "sessions");
    row(md, "reader connections", "readerConnections");
    row(md, "of which ended by destroying the socket", "abruptCloses");
    row(md, "denies", "denies");
    row(md, "connections closed by a deny (4003)", "closedByDeny");
    row(md, "code requests or upgrades refused (denied bookings, a killed node)", "refusedCodes");
    md.append("| nodes killed and started again | ").append(kills.isEmpty() ? "none" : String.join(", ", kills)).append(" |\n\n");
    md.append("## Each node over time\n\n");
    md.append("| minute | node | up since minute | heap after GC MiB | RSS MiB | descriptors | threads | topics |\n");
    md.append("|---|---|---|---|---|---|---|---|\n");
    for (Sample s : samples) {
      md.append(String.format("| %.1f | %s | %.1f | %.1f | %.1f | %.0f | %.0f | %.0f |%n",
          s.minute(), s.node(), s.upSinceMinute(), s.heapMiB(), s.rssMiB(), s.fds(), s.threads(), s.topics()));
    }
    md.append(String.format("%n## Slopes in the second half%n%nPer hour, least squares over each node's samples in the second half "
        + "of the run, leaving out its first %s after a start.%n%n", spoken(warmUp())));
    md.append("| node | samples | heap after GC MiB/h | RSS MiB/h | descriptors/h | threads/h |\n|---|---|---|---|---|---|\n");
    slopes().forEach((run, s) -> md.append(String.format("| %s | %.0f | %+.2f | %+.2f | %+.1f | %+.1f |%n", run, s[0], s[1], s[2], s[3], s[4])));
    md.append(String.format("%n## Heap troughs%n%nThe heap after a full GC rises and falls with the sessions alive at the moment; "
        + "what a leak adds lifts the lowest points. Per node run, the lowest sample in each %s after its warm-up.%n%n", spoken(troughWindow())));
    md.append("| node | first quarter MiB | second | third | fourth |\n|---|---|---|---|---|\n");
    troughs().forEach((run, lows) -> {
      md.append("| ").append(run);
      for (int quarter = 0; quarter < 4; quarter++) {
        Double low = lows.get(quarter);
        md.append(" | ").append(low == null ? "" : String.format("%.1f", low));
      }
      md.append(" |\n");
    });
    md.append(String.format("%n## Live objects that grew in the second half%n%nPer node run, the %d classes whose live bytes "
        + "(`jcmd GC.class_histogram`, after a full GC) grew most between its first sample in the second half and its last. "
        + "A connection's objects come and go with the churn's load at the moment of the sample; what a leak leaves grows at every sample.%n", GROWN));
    firstLive.forEach((run, first) -> {
      Map.Entry<Sample, ClassHistogram> last = lastLive.get(run);
      if (last.getKey() != first.getKey()) {
        md.append(String.format("%n### %s, minute %.1f to %.1f%n%n| class | instances | KiB |%n|---|---|---|%n", run, first.getKey().minute(), last.getKey().minute()));
        last.getValue().grownSince(first.getValue(), GROWN).forEach(g ->
            md.append(String.format("| `%s` | %+,d | %+,.1f |%n", g.className(), g.instances(), g.bytes() / 1024.0)));
      }
    });
    return md.toString();
  }

  private void row(StringBuilder md, String what, String key) {
    Object value = result.get(key);
    md.append("| ").append(what).append(" | ").append(value == null ? "(the run did not finish)" : String.format("%,d", ((Number) value).longValue())).append(" |\n");
  }

  void write(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      Files.writeString(file, markdown());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** "60 s", "90 s", "30 minutes". */
  private static String spoken(Duration d) {
    return d.toSecondsPart() == 0 && d.toMinutes() > 1 ? d.toMinutes() + " minutes" : d.toSeconds() + " s";
  }

  private static double minutes(long nanos) {
    return nanos / 60e9;
  }
}
