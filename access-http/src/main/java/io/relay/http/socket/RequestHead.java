package io.relay.http.socket;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * An HTTP/1.1 request head (RFC 9112 sections 2 to 5) as a port that serves only bodiless
 * requests reads it: the request line, the header fields, and the target's path and query.
 *
 * <p>What it refuses, with the status it is answered with ({@link Malformed}): a head over {@link
 * #MAX_HEAD_BYTES} (431, or 414 when its request line alone is that long), a target over {@link
 * #MAX_TARGET_BYTES} (414), more than {@link #MAX_FIELDS} fields (431), a version other than
 * HTTP/1.x (505), and 400 for anything that does not follow the grammar: a method that is not a
 * token, a target that is not in origin form ({@code /path?query}, section 3.2.1) or holds a
 * byte outside RFC 3986's characters or a bad percent-escape, whitespace between a field's name
 * and its colon (section 5.1), a folded line (section 5.2), a control character in a value, a
 * bare CR. Lines may end with CRLF or a bare LF (section 2.2); empty lines before the request
 * line are skipped.
 */
public final class RequestHead {
  public static final int MAX_HEAD_BYTES = 16 * 1024;
  public static final int MAX_TARGET_BYTES = 2048;
  public static final int MAX_FIELDS = 64;

  private final String method;
  private final String target;
  private final String version;
  private final List<String[]> fields;

  private RequestHead(String method, String target, String version, List<String[]> fields) {
    this.method = method;
    this.target = target;
    this.version = version;
    this.fields = fields;
  }

  /** A head that cannot be served, answered with {@code status} and a one-line reason. */
  public static final class Malformed extends Exception {
    private final int status;

    Malformed(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }

    public int status() {
      return status;
    }
  }

  /**
   * Finds where a head ends in bytes that arrive in pieces, looking at each byte once: the index
   * right after its empty line. Leading empty lines do not end it.
   */
  static final class Scanner {
    private int scanned;
    private int lineStart;
    /** Whether a line with something in it has ended (the request line). */
    private boolean started;

    /**
     * Where the head in {@code bytes[0, length)} ends, or -1 if it has not ended yet; the bytes
     * before the last call's {@code length} must not have changed.
     *
     * @throws Malformed 431 or 414 when {@code length} reached {@link #MAX_HEAD_BYTES} without an
     *     end
     */
    int end(byte[] bytes, int length) throws Malformed {
      for (; scanned < length; scanned++) {
        if (bytes[scanned] != '\n') {
          continue;
        }
        int lineEnd = scanned > lineStart && bytes[scanned - 1] == '\r' ? scanned - 1 : scanned;
        if (lineEnd > lineStart) {
          started = true;
        } else if (started) {
          return ++scanned;
        }
        lineStart = scanned + 1;
      }
      if (length >= MAX_HEAD_BYTES) {
        throw started ? new Malformed(431, "request head too large") : new Malformed(414, "request target too long");
      }
      return -1;
    }
  }

  /** Parses the head in {@code bytes[0, length)}, which a {@link Scanner} found to end there. */
  public static RequestHead parse(byte[] bytes, int length) throws Malformed {
    List<String> lines = lines(bytes, length);
    String[] requestLine = lines.get(0).split(" ", -1);
    if (requestLine.length != 3) {
      throw new Malformed(400, "malformed request line");
    }
    String method = requestLine[0];
    if (method.isEmpty() || !isToken(method)) {
      throw new Malformed(400, "malformed method");
    }
    String target = requestLine[1];
    if (target.length() > MAX_TARGET_BYTES) {
      throw new Malformed(414, "request target too long");
    }
    if (!target.startsWith("/") || !isTargetText(target)) {
      throw new Malformed(400, "malformed request target");
    }
    String version = requestLine[2];
    if (!isHttpVersion(version)) {
      throw new Malformed(400, "malformed HTTP version");
    }
    if (version.charAt(5) != '1') {
      throw new Malformed(505, "HTTP version not supported");
    }
    if (lines.size() - 1 > MAX_FIELDS) {
      throw new Malformed(431, "too many header fields");
    }
    List<String[]> fields = new ArrayList<>(lines.size() - 1);
    for (String line : lines.subList(1, lines.size())) {
      fields.add(field(line));
    }
    return new RequestHead(method, target, version, fields);
  }

  /** The head's lines, from the request line to the last field, without their ends. */
  private static List<String> lines(byte[] bytes, int length) throws Malformed {
    List<String> lines = new ArrayList<>();
    int lineStart = 0;
    for (int i = 0; i < length; i++) {
      if (bytes[i] == '\r' && (i + 1 >= length || bytes[i + 1] != '\n')) {
        throw new Malformed(400, "bare CR in the request head");
      }
      if (bytes[i] != '\n') {
        continue;
      }
      int lineEnd = i > lineStart && bytes[i - 1] == '\r' ? i - 1 : i;
      if (lineEnd > lineStart) {
        lines.add(new String(bytes, lineStart, lineEnd - lineStart, StandardCharsets.ISO_8859_1));
      } else if (!lines.isEmpty()) {
        break;
      }
      lineStart = i + 1;
    }
    return lines;
  }

  private static String[] field(String line) throws Malformed {
    if (line.charAt(0) == ' ' || line.charAt(0) == '\t') {
      throw new Malformed(400, "folded header line");
    }
    int colon = line.indexOf(':');
    if (colon <= 0 || !isToken(line.substring(0, colon))) {
      throw new Malformed(400, "malformed header field");
    }
    String value = line.substring(colon + 1).strip();
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw new Malformed(400, "control character in a header value");
      }
    }
    return new String[] {line.substring(0, colon), value};
  }

  /** RFC 9110 section 5.6.2: tchar. */
  private static boolean isToken(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean tchar =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!tchar) {
        return false;
      }
    }
    return true;
  }

  /** RFC 3986's unreserved, reserved and '%' characters: what a request target may hold. */
  /** {@code HTTP/d.d} (RFC 9112 section 2.3), checked without a regular expression on every request. */
  private static boolean isHttpVersion(String version) {
    return version.length() == 8
        && version.startsWith("HTTP/")
        && isDigit(version.charAt(5))
        && version.charAt(6) == '.'
        && isDigit(version.charAt(7));
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private static boolean isTargetText(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean allowed =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || "-._~:/?#[]@!$&'()*+,;=%".indexOf(c) >= 0;
      if (!allowed || c == '#') {
        return false;
      }
    }
    return true;
  }

  public String method() {
    return method;
  }

  /** {@code HTTP/1.0} or {@code HTTP/1.1}. */
  public String version() {
    return version;
  }

  /** The target's path, as sent (not decoded). */
  public String path() {
    int query = target.indexOf('?');
    return query < 0 ? target : target.substring(0, query);
  }

  /**
   * The percent-decoded value of the target's first query parameter {@code name} ({@code +} is a
   * space, as in a form), or null if it has none.
   *
   * @throws Malformed 400 for a bad percent-escape
   */
  public String query(String name) throws Malformed {
    int start = target.indexOf('?');
    if (start < 0) {
      return null;
    }
    for (String parameter : target.substring(start + 1).split("&")) {
      int equals = parameter.indexOf('=');
      String key = decode(equals < 0 ? parameter : parameter.substring(0, equals));
      if (key.equals(name)) {
        return equals < 0 ? "" : decode(parameter.substring(equals + 1));
      }
    }
    return null;
  }

  private static String decode(String s) throws Malformed {
    if (s.indexOf('%') < 0 && s.indexOf('+') < 0) {
      return s;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '+') {
        bytes.write(' ');
      } else if (c != '%') {
        bytes.write(c);
      } else {
        int high = i + 2 < s.length() ? Character.digit(s.charAt(i + 1), 16) : -1;
        int low = high < 0 ? -1 : Character.digit(s.charAt(i + 2), 16);
        if (low < 0) {
          throw new Malformed(400, "malformed percent-escape in the request target");
        }
        bytes.write(high * 16 + low);
        i += 2;
      }
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  /**
   * The value of header field {@code name} (case-insensitive); several fields of that name are
   * joined with ", " (RFC 9110 section 5.3). Null if the head has none.
   */
  public String header(String name) {
    String joined = null;
    for (String[] field : fields) {
      if (field[0].equalsIgnoreCase(name)) {
        joined = joined == null ? field[1] : joined + ", " + field[1];
      }
    }
    return joined;
  }

  /**
   * Whether the client lets the connection carry its next request after the answer: HTTP/1.1
   * without a {@code close} option in {@code Connection} (RFC 9112 section 9.3). An HTTP/1.0
   * client's connection is closed after the answer.
   */
  public boolean keepAlive() {
    if (!version.equals("HTTP/1.1")) {
      return false;
    }
    String connection = header("Connection");
    if (connection == null) {
      return true;
    }
    for (String option : connection.split(",")) {
      if (option.strip().equalsIgnoreCase("close")) {
        return false;
      }
    }
    return true;
  }

  /** How many fields named {@code name} (case-insensitive) the head has. */
  public int count(String name) {
    int n = 0;
    for (String[] field : fields) {
      if (field[0].equalsIgnoreCase(name)) {
        n++;
      }
    }
    return n;
  }
}
