package io.relay.harness;

import io.relay.memory.BufferChecks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Checks what node logs must never hold: a token or a one-time code (nor a query string carrying
 * one), and a fault in the node's accounting of relayed bytes ({@link BufferChecks}), which every
 * node the harness starts checks for.
 */
public final class LogHygiene {
  /** A JWT: base64url JSON header, payload and signature. */
  private static final Pattern TOKEN = Pattern.compile("eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]+");
  /** A relay URI's query. */
  private static final Pattern CODE = Pattern.compile("[?&]code=[A-Za-z0-9_-]{8,}");
  /** What a node logs for a fault in its accounting of relayed bytes. */
  private static final String BUFFER_FAULT = "buffer accounting fault";

  private LogHygiene() {}

  /** The offending lines of {@code logs}, with their file (tokens and codes redacted); empty when clean. */
  public static List<String> violations(Collection<Path> logs) {
    List<String> found = new ArrayList<>();
    for (Path log : logs) {
      try {
        for (String line : Files.readAllLines(log, StandardCharsets.ISO_8859_1)) {
          if (TOKEN.matcher(line).find() || CODE.matcher(line).find() || line.contains(BUFFER_FAULT)) {
            found.add(log.getFileName() + ": " + redact(line));
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + log, e);
      }
    }
    return found;
  }

  /** Fails when any of {@code logs} holds a token, a code or a buffer accounting fault. */
  public static void assertClean(Collection<Path> logs) {
    List<String> found = violations(logs);
    if (!found.isEmpty()) {
      throw new AssertionError("logs hold tokens, codes or buffer accounting faults:\n" + String.join("\n", found));
    }
  }

  private static String redact(String line) {
    return CODE.matcher(TOKEN.matcher(line).replaceAll("<token>")).replaceAll("?code=<code>");
  }
}
