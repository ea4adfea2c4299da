package io.relay.harness;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A JVM's live objects by class, as {@code jcmd <pid> GC.class_histogram} prints them: the command
 * runs a full collection first, so only reachable objects count. Two of them, taken apart in time,
 * name the classes whose objects a node keeps accumulating.
 */
record ClassHistogram(Map<String, Count> byClass) {
  /** Instances and bytes of one class. */
  record Count(long instances, long bytes) {}

  /** How much one class grew between two histograms. */
  record Growth(String className, long instances, long bytes) {}

  /** {@code  12:   7205   332912  [B (java.base@17)}: rank, instances, bytes, class and its module. */
  private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

  /** Takes the live histogram of {@code node}'s JVM, a full collection included. */
  static ClassHistogram of(NodeProcess node) throws Exception {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    Command histogram = Command.run(List.of(jcmd.toString(), Long.toString(node.process().pid()), "GC.class_histogram"), null, Duration.ofSeconds(60));
    if (histogram.exit() != 0) {
      throw new IllegalStateException("jcmd GC.class_histogram failed for " + node + ": " + histogram.output().strip());
    }
    return parse(histogram.output());
  }

  static ClassHistogram parse(String text) {
    Map<String, Count> byClass = new HashMap<>();
    for (String line : text.split("\n")) {
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        byClass.merge(row.group(3), new Count(Long.parseLong(row.group(1)), Long.parseLong(row.group(2))),
            (a, b) -> new Count(a.instances() + b.instances(), a.bytes() + b.bytes()));
      }
    }
    if (byClass.isEmpty()) {
      throw new IllegalArgumentException("no class histogram in: " + text.lines().limit(3).toList());
    }
    return new ClassHistogram(Map.copyOf(byClass));
  }

  /** The {@code top} classes whose live bytes grew most since {@code earlier}, largest growth first; none that did not grow. */
  List<Growth> grownSince(ClassHistogram earlier, int top) {
    List<Growth> grown = new ArrayList<>();
    byClass.forEach((name, now) -> {
      Count then = earlier.byClass().getOrDefault(name, new Count(0, 0));
      if (now.bytes() > then.bytes()) {
        grown.add(new Growth(name, now.instances() - then.instances(), now.bytes() - then.bytes()));
      }
    });
    grown.sort(Comparator.comparingLong(Growth::bytes).reversed().thenComparing(Growth::className));
    return grown.subList(0, Math.min(top, grown.size()));
  }
}
