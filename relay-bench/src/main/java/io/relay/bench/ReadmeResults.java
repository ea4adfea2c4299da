package io.relay.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The README's results table: a few rows of the benchmark page's "Against nchan and the goals",
 * written between the README's markers by the same run that writes the page, so the README
 * carries no figure of its own.
 */
final class ReadmeResults {
  static final String START = "<!-- results:start -->";
  static final String END = "<!-- results:end -->";

  /** The rows the README shows: measure and server, against nchan or the goal. */
  private record Pick(String measure, String server) {}

  private static final List<Pick> PICKS =
      List.of(
          new Pick("W1 p99 ms", "relay"),
          new Pick("W1 server CPU % per delivered MB/s", "relay"),
          new Pick("W2 p99 ms", "relay"),
          new Pick("W3 delivered MB/s", "relay"),
          new Pick("W3 server CPU % per delivered MB/s", "relay"),
          new Pick("W4 highest passing rate /s per topic", "relay"),
          new Pick("W5 RSS per idle connection KB", "relay"),
          new Pick("W6 admitted/s, closed loop", "relay-1-node"),
          new Pick("W6 admitted/s, closed loop", "relay-3-nodes-nginx"));

  private ReadmeResults() {}

  /** Replaces what lies between the README's markers with the picked rows of {@code summary}. */
  static void write(Path readme, String summary, String page) throws IOException {
    Files.writeString(readme, replace(Files.readString(readme), table(summary, page)));
  }

  static String replace(String readme, String block) {
    int start = readme.indexOf(START);
    int end = readme.indexOf(END);
    if (start < 0 || end < start) {
      throw new IllegalStateException("the README has no " + START + " ... " + END + " block for the results");
    }
    return readme.substring(0, start + START.length()) + "\n" + block + readme.substring(end);
  }

  /** The picked rows of the page's summary (rows of "| measure | server | relay | reference | ratio | goal | met |"). */
  static String table(String summary, String page) {
    StringBuilder rows = new StringBuilder();
    for (Pick pick : PICKS) {
      for (String line : summary.split("\n")) {
        String[] cells = line.split("\\|");
        if (cells.length >= 8
            && cells[1].trim().equals(pick.measure())
            && cells[2].trim().equals(pick.server())
            && (cells[4].trim().startsWith("nchan") || cells[4].trim().startsWith("goal"))) {
          rows.append("| ").append(cells[1].trim()).append(" | ").append(cells[2].trim()).append(" | ").append(cells[3].trim())
              .append(" | ").append(cells[4].trim()).append(" | ").append(cells[5].trim()).append(" | ").append(cells[6].trim())
              .append(" | ").append(cells[7].trim()).append(" |\n");
        }
      }
    }
    return "| measure | server | relay | reference | relay / reference | goal | |\n|---|---|---|---|---|---|---|\n"
        + rows
        + "\nFrom the recorded run on [" + page + "](" + page + ") (2 cores; the project's Java generator; written there by "
        + "`relay-bench/run`, with every other row, the same workloads measured by the independent Node.js generator, and the machine).\n";
  }
}
