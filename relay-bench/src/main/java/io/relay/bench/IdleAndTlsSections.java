package io.relay.bench;

import static io.relay.bench.Report.md;
import static io.relay.bench.Report.summary;
import static io.relay.bench.Results.best;
import static io.relay.bench.Results.of;
import static io.relay.bench.Tables.chart;
import static io.relay.bench.Tables.idleMemory;
import static io.relay.bench.Tables.idleTable;
import static io.relay.bench.Tables.latencyTable;
import static io.relay.bench.Tables.ratio;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@link Report} page's section on idle connections (W5) and its section on the workloads
 * over TLS (wss W1, W3 and W5), and their rows in the summary.
 */
final class IdleAndTlsSections {
  private IdleAndTlsSections() {}

  /** W5, from the plain rows; its chart goes to {@code chartTo}. */
  static void idle(List<Map<String, Object>> plain, Path chartTo) throws Exception {
    List<Map<String, Object>> w5 = of(plain, "W5");
    if (!w5.isEmpty()) {
      md.append("## W5 capacity (idle connections, 1 writer + 4 readers per topic)\n\n");
      idleTable(w5);
      double heapPer = best(w5, "relay", "heapPerConnectionKB", false);
      double heapWorst = best(w5, "relay", "heapPerConnectionKB", true);
      md.append(String.format(Locale.ROOT, "%nW5 relay heap per idle connection: %.1f-%.1f KB (goal <= 16 KiB = 16.4 KB): goal %s. RSS per connection relay %.1f KB, nchan %.1f KB.%n",
          heapPer, heapWorst, heapWorst <= 16.384 ? "**met**" : "**not met**, " + String.format(Locale.ROOT, "%.1fx", heapPer / 16.384),
          best(w5, "relay", "rssPerConnectionKB", false), best(w5, "nchan", "rssPerConnectionKB", false)));
      ratio(w5, "rssPerConnectionKB", false, 1.0, "W5 RSS per idle connection KB");
      md.append("\nEach server first opens and closes a fifth as many connections, and the relay's readings wait until the access codes of its "
          + "connections have expired, so the figures are what a further idle connection holds in a server that has served connections before "
          + "([benchmark-notes.md](benchmark-notes.md), \"How it is measured\"). "
          + "Heap is measured after a full GC (`jcmd GC.run`, then `GC.heap_info`); RSS from /proc (nginx: master and workers). "
          + "The node's RSS growth is split by where it is (`/proc/<pid>/smaps`): pages in the Java heap's address range (live objects, and the pages "
          + "the collector touched for garbage), the JIT's compiled code and class metadata (`Compiler.codecache` used plus Metaspace committed: "
          + "a node that has just started compiles its connect path during the first connections, once), and the rest of the process.\n\n");
      chart(idleMemory(w5), "W5: server memory against idle connections", "connections", "RSS, MB", chartTo.toFile(), false);
      md.append("![W5 memory against connections](" + chartTo.getFileName() + ")\n\n");
    }
  }

  /** The wss rows' section, if any ran. */
  static void tls(List<Map<String, Object>> tls) {
    if (!tls.isEmpty()) {
      md.append("## Over TLS: wss and https terminated by the node itself and by nginx\n\n"
          + "The same workloads with one self-signed RSA 2048 certificate on both servers; the generator asks for TLS 1.3 with "
          + "TLS_AES_128_GCM_SHA256 and fails a connection that negotiates another suite (the suite negotiated is recorded in each result).\n\n");
      List<Map<String, Object>> tlsW1 = of(tls, "W1");
      if (!tlsW1.isEmpty()) {
        md.append("### wss W1 video fan-out\n\n");
        latencyTable(tlsW1);
        ratio(tlsW1, "p99Ms", false, 1.5, "wss W1 p99 ms");
      }
      List<Map<String, Object>> tlsW3 = of(tls, "W3");
      if (!tlsW3.isEmpty()) {
        md.append("### wss W3 one stream\n\n");
        latencyTable(tlsW3);
        ratio(tlsW3, "deliveredMBps", true, 1.2, "wss W3 delivered MB/s");
        TrafficSections.cpuPerMBps(tlsW3, "wss W3");
      }
      List<Map<String, Object>> tlsW5 = of(tls, "W5");
      if (!tlsW5.isEmpty()) {
        md.append("### wss W5 idle connections\n\n");
        idleTable(tlsW5);
        double heapWorst = best(tlsW5, "relay", "heapPerConnectionKB", true);
        md.append(String.format(Locale.ROOT, "%nwss W5 relay heap per idle TLS connection, worst run: %.1f KB (goal <= 32 KiB = 32.8 KB): goal %s.%n%n",
            heapWorst, heapWorst <= 32.768 ? "**met**" : "**not met**"));
        summary.append(String.format(Locale.ROOT, "| wss W5 heap per idle TLS connection KB | relay-tls | %.1f | 32 KiB | %.2f | <= 1.0 | %s |%n",
            heapWorst, heapWorst / 32.768, heapWorst <= 32.768 ? "met" : "**not met**"));
        ratio(tlsW5, "rssPerConnectionKB", false, 1.0, "wss W5 RSS per idle connection KB");
      }
    }
  }
}
