package io.relay.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a server's CPU time and resident memory from /proc (the given processes and their
 * children, so an nginx master covers its workers), its Java heap and where its memory is through
 * {@code jcmd} and {@code smaps}, and the relay's metrics (counters read around a W4 window; its
 * heap after a window; gauges it waits on).
 * Linux only; every figure is -1 when unreadable.
 */
final class ServerProbe {
  private static final double TICKS_PER_SECOND = 100.0;
  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
  /** The address range the JVM reserved for its heap, as {@code GC.heap_info} prints it (G1, Serial, Parallel). */
  private static final Pattern HEAP_RANGE = Pattern.compile("\\[0x([0-9a-f]+), 0x([0-9a-f]+)\\)");
  private static final Pattern METASPACE_COMMITTED = Pattern.compile("Metaspace\\s+used \\d+K, committed (\\d+)K");
  private static final Pattern CODE_HEAP_USED = Pattern.compile("CodeHeap '[^']+': size=\\d+Kb used=(\\d+)Kb");
  private static final Pattern MAPPING = Pattern.compile("^([0-9a-f]+)-([0-9a-f]+) ");

  private final List<Long> roots;
  private final Long jvmPid;
  private final URI metrics;
  /** The Java heap's reserved address range, read once: it does not move. */
  private long[] heapRange;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  ServerProbe(List<Long> roots, Long jvmPid, URI metrics) {
    this.roots = roots;
    this.jvmPid = jvmPid;
    this.metrics = metrics;
  }

  /**
   * CPU seconds used so far by the server processes: the given ones and their children, and the
   * children they have already reaped, so that a worker that exits (nginx restarting one that
   * crashed) does not take its CPU time out of the sum.
   */
  double cpuSeconds() {
    double total = 0;
    for (long pid : withChildren()) {
      total += cpuSecondsOf(Long.toString(pid));
    }
    for (long root : roots) {
      total += reapedChildrenCpuSeconds(Long.toString(root));
    }
    return total;
  }

  /**
   * Waits until the server processes use less than {@code cores} of CPU over a quarter of a second,
   * or until {@code deadlineSeconds} have passed.
   *
   * @return the seconds waited, or -1 if the server was still busy at the deadline
   */
  double awaitQuiet(double cores, double deadlineSeconds) throws InterruptedException {
    long t0 = System.nanoTime();
    long window = TimeUnit.MILLISECONDS.toNanos(250);
    while (System.nanoTime() - t0 < deadlineSeconds * 1e9) {
      double cpu0 = cpuSeconds();
      long w0 = System.nanoTime();
      TimeUnit.NANOSECONDS.sleep(window);
      if ((cpuSeconds() - cpu0) / ((System.nanoTime() - w0) / 1e9) < cores) {
        return (System.nanoTime() - t0) / 1e9;
      }
    }
    return -1;
  }

  static double selfCpuSeconds() {
    return cpuSecondsOf("self");
  }

  private static double cpuSecondsOf(String pid) {
    return statTicks(pid, 11) / TICKS_PER_SECOND;
  }

  /** The CPU time of a process's children that have exited and been waited for. */
  private static double reapedChildrenCpuSeconds(String pid) {
    return statTicks(pid, 13) / TICKS_PER_SECOND;
  }

  /**
   * Two adjacent clock-tick fields of {@code /proc/<pid>/stat} added, counted from the field after
   * the command name: 11 and 12 are utime and stime, 13 and 14 cutime and cstime; 0 if unreadable.
   */
  private static long statTicks(String pid, int first) {
    try {
      String stat = Files.readString(Path.of("/proc", pid, "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return Long.parseLong(f[first]) + Long.parseLong(f[first + 1]);
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** Resident set size of the server processes, in bytes. */
  long rssBytes() {
    long total = 0;
    for (long pid : withChildren()) {
      try {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
          if (line.startsWith("VmRSS:")) {
            total += Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
          }
        }
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    }
    return roots.isEmpty() ? -1 : total;
  }

  /**
   * Used Java heap of the server JVM in bytes, optionally after a full GC; -1 if not a JVM. Without
   * a GC it is the relay's own gauge where it has metrics: {@code jcmd} starts a JVM, which takes
   * the two cores for a moment (beside W4 at 400/s it held every topic's messages for up to 146
   * ms); read after each W4 window, it would stall the second the next step settles in.
   */
  long heapUsedBytes(boolean gcFirst) {
    if (jvmPid == null) {
      return -1;
    }
    double gauge = gcFirst ? Double.NaN : metric("relay_jvm_heap_used_bytes");
    if (!Double.isNaN(gauge)) {
      return (long) gauge;
    }
    if (gcFirst) {
      jcmd("GC.run");
    }
    Matcher m = HEAP_USED.matcher(jcmd("GC.heap_info"));
    return m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
  }

  /**
   * Where the server JVM's resident memory is, in bytes: in its Java heap's address range (live
   * objects and the pages the collector has touched for garbage), its JIT-compiled code and class
   * metadata ({@code Compiler.codecache} used plus {@code Metaspace} committed), and the rest of the
   * process; with the RSS read just before the mappings, so that the parts add up to it. Null if
   * not a JVM or the heap's range is not printed (ZGC).
   */
  MemorySplit memorySplit() {
    if (jvmPid == null) {
      return null;
    }
    if (heapRange == null) {
      Matcher range = HEAP_RANGE.matcher(jcmd("GC.heap_info"));
      if (!range.find()) {
        return null;
      }
      heapRange = new long[] {Long.parseUnsignedLong(range.group(1), 16), Long.parseUnsignedLong(range.group(2), 16)};
    }
    long heapStart = heapRange[0];
    long heapEnd = heapRange[1];
    long rss = rssBytes();
    long inHeap = 0;
    long total = 0;
    long start = 0;
    long end = 0;
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(jvmPid), "smaps"))) {
        Matcher m = MAPPING.matcher(line);
        if (m.find()) {
          start = Long.parseUnsignedLong(m.group(1), 16);
          end = Long.parseUnsignedLong(m.group(2), 16);
        } else if (line.startsWith("Rss:")) {
          long resident = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
          total += resident;
          if (start >= heapStart && end <= heapEnd) {
            inHeap += resident;
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      return null;
    }
    Matcher metaspace = METASPACE_COMMITTED.matcher(jcmd("GC.heap_info"));
    if (!metaspace.find()) {
      return null;
    }
    long code = 0;
    Matcher codeHeaps = CODE_HEAP_USED.matcher(jcmd("Compiler.codecache"));
    while (codeHeaps.find()) {
      code += Long.parseLong(codeHeaps.group(1)) * 1024;
    }
    long compiled = code + Long.parseLong(metaspace.group(1)) * 1024;
    return new MemorySplit(rss, inHeap, compiled, total - inHeap - compiled);
  }

  /**
   * A JVM's resident memory ({@code rss}, from its status just before its mappings were read) and
   * where it is: in its heap's range, its compiled code and class metadata, the rest.
   */
  record MemorySplit(long rss, long heapPages, long compiledAndClasses, long otherNative) {
    MemorySplit minus(MemorySplit before) {
      return new MemorySplit(
          rss - before.rss,
          heapPages - before.heapPages,
          compiledAndClasses - before.compiledAndClasses,
          otherNative - before.otherNative);
    }
  }

  /**
   * What the relay has counted so far, read before and after a W4 window, from one scrape of its
   * metrics; every figure NaN without a metrics endpoint (nchan).
   *
   * @param droppedFrames frames dropped from full reader queues
   * @param framesOut frames written to readers
   * @param gcSeconds time in garbage collection, every collector together (for G1 its pauses)
   * @param loopDelaysOver50ms probes of the relay's event loops that ran more than 50 ms late
   */
  record Counters(double droppedFrames, double framesOut, double gcSeconds, double loopDelaysOver50ms) {}

  Counters counters() {
    String body = scrape();
    return new Counters(
        sample(body, "relay_frames_dropped_total"),
        sample(body, "relay_frames_out_total"),
        sumOfSeries(body, "jvm_gc_collection_seconds_sum"),
        sample(body, "relay_event_loop_delay_seconds_count") - sample(body, "relay_event_loop_delay_seconds_bucket{le=\"0.05\"}"));
  }

  /**
   * Waits until the relay's metric {@code name} reads 0, polling twice a second; at once without a
   * metrics endpoint (nchan).
   *
   * @throws IllegalStateException naming {@code what} if it did not within {@code deadlineSeconds}
   */
  void awaitZero(String name, String what, double deadlineSeconds) throws InterruptedException {
    if (metrics == null) {
      return;
    }
    long t0 = System.nanoTime();
    double value = metric(name);
    while (value != 0) {
      if (System.nanoTime() - t0 > deadlineSeconds * 1e9) {
        throw new IllegalStateException(what + ": not within " + deadlineSeconds + " s (" + name + " reads " + value + ")");
      }
      TimeUnit.MILLISECONDS.sleep(500);
      value = metric(name);
    }
  }

  /** The value of the relay's unlabelled metric {@code name}, or NaN without a metrics endpoint or that metric. */
  private double metric(String name) {
    return sample(scrape(), name);
  }

  /** The relay's metrics in Prometheus' text format, or null without a metrics endpoint. */
  private String scrape() {
    if (metrics == null) {
      return null;
    }
    try {
      return http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The unlabelled sample {@code name} of an exposition, or NaN. */
  static double sample(String exposition, String name) {
    if (exposition == null) {
      return Double.NaN;
    }
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + " (\\S+)").matcher(exposition);
    return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
  }

  /** The sum of every series (label set) of {@code name} in an exposition, or NaN if it has none. */
  static double sumOfSeries(String exposition, String name) {
    if (exposition == null) {
      return Double.NaN;
    }
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? (\\S+)").matcher(exposition);
    double sum = 0;
    boolean found = false;
    while (m.find()) {
      sum += Double.parseDouble(m.group(1));
      found = true;
    }
    return found ? sum : Double.NaN;
  }

  private String jcmd(String command) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      // its output goes to a file, so that a jcmd that hangs is killed at the deadline, not read past it
      Path output = Files.createTempFile("relay-bench-jcmd", ".txt");
      try {
        Process p =
            new ProcessBuilder(jcmd.toString(), Long.toString(jvmPid), command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
        return Files.readString(output);
      } finally {
        Files.deleteIfExists(output);
      }
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  private List<Long> withChildren() {
    List<Long> all = new ArrayList<>(roots);
    if (roots.isEmpty()) {
      return all;
    }
    try (var dirs = Files.list(Path.of("/proc"))) {
      for (Path d : (Iterable<Path>) dirs::iterator) {
        String name = d.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        try {
          String stat = Files.readString(d.resolve("stat"));
          long ppid = Long.parseLong(stat.substring(stat.lastIndexOf(')') + 2).split(" ")[1]);
          if (roots.contains(ppid)) {
            all.add(Long.parseLong(name));
          }
        } catch (IOException | RuntimeException e) {
          // a process that just ended
        }
      }
    } catch (IOException e) {
      return all;
    }
    return all;
  }
}
