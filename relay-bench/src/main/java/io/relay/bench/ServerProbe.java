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
 * children, so an nginx master covers its workers), its Java heap through {@code jcmd}, and the
 * relay's drop counter from its metrics endpoint. Linux only; every figure is -1 when unreadable.
 */
final class ServerProbe {
  private static final double TICKS_PER_SECOND = 100.0;
  private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
  private static final Pattern DROPPED = Pattern.compile("(?m)^relay_frames_dropped_total (\\S+)");

  private final List<Long> roots;
  private final Long jvmPid;
  private final URI metrics;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  ServerProbe(List<Long> roots, Long jvmPid, URI metrics) {
    this.roots = roots;
    this.jvmPid = jvmPid;
    this.metrics = metrics;
  }

  /** CPU seconds used so far by the server processes (and, for "self", this JVM). */
  double cpuSeconds() {
    double total = 0;
    for (long pid : withChildren()) {
      total += cpuSecondsOf(Long.toString(pid));
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
    try {
      String stat = Files.readString(Path.of("/proc", pid, "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
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

  /** Used Java heap of the server JVM in bytes, optionally after a full GC; -1 if not a JVM. */
  long heapUsedBytes(boolean gcFirst) {
    if (jvmPid == null) {
      return -1;
    }
    if (gcFirst) {
      jcmd("GC.run");
    }
    Matcher m = HEAP_USED.matcher(jcmd("GC.heap_info"));
    return m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
  }

  /** The relay's relay_frames_dropped_total, or -1 without a metrics endpoint. */
  long droppedFrames() {
    if (metrics == null) {
      return -1;
    }
    try {
      String body =
          http.send(HttpRequest.newBuilder(metrics).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString())
              .body();
      Matcher m = DROPPED.matcher(body);
      return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }

  private String jcmd(String command) {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    try {
      Process p = new ProcessBuilder(jcmd.toString(), Long.toString(jvmPid), command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroy();
      }
      return out;
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
