package io.cairn.connectors.kafka;

import io.cairn.engine.row.Type;
import java.nio.charset.StandardCharsets;

/**
 * Reads the common record shape — one flat JSON object of plain ASCII names and scalar values —
 * straight from its bytes into column values, with no parser object, token or tree per record.
 *
 * <p>This is the fast path of {@link JsonRecordDecoder}, whose tree path defines what a record
 * means. The rule is therefore one-sided: {@link #read} returns values only when it is certain the
 * tree path would return the same values, and {@code null} ("give up") for anything else — invalid
 * JSON, a byte outside printable ASCII inside a string, an escape, a nested value, a duplicate
 * field, a value not plainly of its column's type, a number outside {@code long} or a non-finite
 * double, a possible Kafka Connect wrapper ({@code schema}/{@code payload}), a field not matched
 * exactly while some column is absent (the tree path then matches names case-insensitively).
 * Giving up costs speed, never correctness: the caller decodes such a record on the tree path.
 *
 * <p>Numbers follow JSON's grammar ({@code -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?}). A double
 * with at most 15 significant digits and a decimal exponent within ±22 is computed as one
 * correctly rounded multiplication or division of two exact doubles (Clinger's fast path), which
 * equals {@link Double#parseDouble}; any other is handed to {@link Double#parseDouble}.
 */
final class FlatJson {
  private static final double[] POW10 = new double[23];
  private static final byte[] SCHEMA = "schema".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] PAYLOAD = "payload".getBytes(StandardCharsets.US_ASCII);

  static {
    double v = 1;
    for (int i = 0; i < POW10.length; i++) {
      POW10[i] = v;
      v *= 10;
    }
  }

  private FlatJson() {}

  /** The ASCII bytes of each name, or null when one is not ASCII (the fast path is then never taken). */
  static byte[][] names(String[] names) {
    byte[][] out = new byte[names.length][];
    for (int i = 0; i < names.length; i++) {
      for (int j = 0; j < names[i].length(); j++) {
        if (names[i].charAt(j) >= 0x80) {
          return null;
        }
      }
      out[i] = names[i].getBytes(StandardCharsets.US_ASCII);
    }
    return out;
  }

  /**
   * The values of the object in {@code b} for the columns named {@code names} with {@code types}
   * (absent fields and JSON null are null), or null to give up (see the class comment).
   */
  static Object[] read(byte[] b, byte[][] names, Type[] types) {
    return read(b, names, types, null);
  }

  /**
   * As {@link #read(byte[], byte[][], Type[])}, with the strings of column {@code i} taken from
   * {@code texts[i]} when it is not null (see {@link TextCache}).
   */
  static Object[] read(byte[] b, byte[][] names, Type[] types, TextCache[] texts) {
    if (names == null) {
      return null;
    }
    int n = b.length;
    int p = skipWs(b, 0);
    if (p >= n || b[p] != '{') {
      return null;
    }
    p = skipWs(b, p + 1);
    Object[] out = new Object[types.length];
    boolean[] seen = new boolean[types.length];
    int seenCount = 0;
    boolean unmatched = false;
    int expect = 0;
    if (p < n && b[p] == '}') {
      p++;
    } else {
      while (true) {
        if (p >= n || b[p] != '"') {
          return null;
        }
        int nameStart = p + 1;
        int nameEnd = endOfPlainString(b, nameStart);
        if (nameEnd < 0) {
          return null;
        }
        p = skipWs(b, nameEnd + 1);
        if (p >= n || b[p] != ':') {
          return null;
        }
        p = skipWs(b, p + 1);
        if (p >= n) {
          return null;
        }
        int col = match(b, nameStart, nameEnd, names, expect);
        if (col < 0) {
          if (same(b, nameStart, nameEnd, SCHEMA) || same(b, nameStart, nameEnd, PAYLOAD)) {
            return null;
          }
          unmatched = true;
          p = skipScalar(b, p);
        } else {
          if (seen[col]) {
            return null;
          }
          seen[col] = true;
          seenCount++;
          expect = col + 1;
          p = value(b, p, types[col], out, col, texts == null ? null : texts[col]);
        }
        if (p < 0) {
          return null;
        }
        p = skipWs(b, p);
        if (p >= n) {
          return null;
        }
        if (b[p] == ',') {
          p = skipWs(b, p + 1);
        } else if (b[p] == '}') {
          p++;
          break;
        } else {
          return null;
        }
      }
    }
    if (skipWs(b, p) != n || (unmatched && seenCount < types.length)) {
      return null;
    }
    return out;
  }

  /** Reads the value at {@code p} into {@code out[col]}; the index after it, or -1 to give up. */
  private static int value(byte[] b, int p, Type type, Object[] out, int col, TextCache text) {
    byte c = b[p];
    if (c == 'n') {
      return literal(b, p, "null");
    }
    if (type == Type.NULL) {
      return skipScalar(b, p);
    }
    switch (c) {
      case 't', 'f' -> {
        if (type != Type.BOOLEAN) {
          return -1;
        }
        out[col] = c == 't';
        return literal(b, p, c == 't' ? "true" : "false");
      }
      case '"' -> {
        if (type != Type.TEXT) {
          return -1;
        }
        int end = endOfPlainString(b, p + 1);
        if (end < 0) {
          return -1;
        }
        out[col] = text == null ? new String(b, p + 1, end - p - 1, StandardCharsets.ISO_8859_1) : text.get(b, p + 1, end - p - 1);
        return end + 1;
      }
      default -> {
        if (c != '-' && (c < '0' || c > '9')) {
          return -1;
        }
        return number(b, p, type, out, col);
      }
    }
  }

  private static int number(byte[] b, int start, Type type, Object[] out, int col) {
    int n = b.length;
    int p = start;
    boolean neg = b[p] == '-';
    if (neg) {
      p++;
    }
    int intStart = p;
    if (p >= n || b[p] < '0' || b[p] > '9') {
      return -1;
    }
    if (b[p] == '0') {
      p++;
      if (p < n && b[p] >= '0' && b[p] <= '9') {
        return -1; // a leading zero is not JSON
      }
    } else {
      while (p < n && b[p] >= '0' && b[p] <= '9') {
        p++;
      }
    }
    int intEnd = p;
    int fracStart = -1;
    int fracEnd = -1;
    if (p < n && b[p] == '.') {
      fracStart = ++p;
      while (p < n && b[p] >= '0' && b[p] <= '9') {
        p++;
      }
      fracEnd = p;
      if (fracEnd == fracStart) {
        return -1;
      }
    }
    boolean hasExp = false;
    int exp = 0;
    boolean expTooLong = false;
    if (p < n && (b[p] == 'e' || b[p] == 'E')) {
      hasExp = true;
      p++;
      boolean expNeg = false;
      if (p < n && (b[p] == '+' || b[p] == '-')) {
        expNeg = b[p] == '-';
        p++;
      }
      int expStart = p;
      while (p < n && b[p] >= '0' && b[p] <= '9') {
        if (p - expStart < 6) {
          exp = exp * 10 + (b[p] - '0');
        } else {
          expTooLong = true;
        }
        p++;
      }
      if (p == expStart) {
        return -1;
      }
      exp = expNeg ? -exp : exp;
    }
    boolean integral = fracStart < 0 && !hasExp;
    if (type.isLong()) {
      if (!integral || intEnd - intStart > 18) {
        return -1; // a float, or possibly outside long: the tree path decides
      }
      long v = digits(b, intStart, intEnd, 0);
      out[col] = neg ? -v : v;
      return p;
    }
    if (type != Type.DOUBLE) {
      return -1;
    }
    if (integral) {
      if (intEnd - intStart > 18) {
        return -1;
      }
      long v = digits(b, intStart, intEnd, 0);
      out[col] = (double) (neg ? -v : v);
      return p;
    }
    int sig = (intEnd - intStart) + (fracStart < 0 ? 0 : fracEnd - fracStart);
    double d;
    int scale = exp - (fracStart < 0 ? 0 : fracEnd - fracStart);
    if (sig <= 15 && !expTooLong && scale >= -22 && scale <= 22) {
      long m = digits(b, intStart, intEnd, 0);
      if (fracStart >= 0) {
        m = digits(b, fracStart, fracEnd, m);
      }
      d = scale >= 0 ? m * POW10[scale] : m / POW10[-scale];
      d = neg ? -d : d;
    } else {
      d = Double.parseDouble(new String(b, start, p - start, StandardCharsets.ISO_8859_1));
    }
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      return -1;
    }
    out[col] = d;
    return p;
  }

  private static long digits(byte[] b, int from, int to, long acc) {
    for (int i = from; i < to; i++) {
      acc = acc * 10 + (b[i] - '0');
    }
    return acc;
  }

  /** Skips a string, number or literal (validating it); -1 for anything else. */
  private static int skipScalar(byte[] b, int p) {
    byte c = b[p];
    return switch (c) {
      case 'n' -> literal(b, p, "null");
      case 't' -> literal(b, p, "true");
      case 'f' -> literal(b, p, "false");
      case '"' -> {
        int end = endOfPlainString(b, p + 1);
        yield end < 0 ? -1 : end + 1;
      }
      default -> c == '-' || (c >= '0' && c <= '9') ? number(b, p, Type.DOUBLE, new Object[1], 0) : -1;
    };
  }

  private static int literal(byte[] b, int p, String word) {
    if (p + word.length() > b.length) {
      return -1;
    }
    for (int i = 0; i < word.length(); i++) {
      if (b[p + i] != word.charAt(i)) {
        return -1;
      }
    }
    return p + word.length();
  }

  /** The index of the closing quote of a string of printable ASCII without escapes from {@code p}, or -1. */
  private static int endOfPlainString(byte[] b, int p) {
    for (int i = p; i < b.length; i++) {
      byte c = b[i];
      if (c == '"') {
        return i;
      }
      if (c == '\\' || c < 0x20) { // also every byte >= 0x80 (negative)
        return -1;
      }
    }
    return -1;
  }

  private static int match(byte[] b, int from, int to, byte[][] names, int expect) {
    if (expect < names.length && same(b, from, to, names[expect])) {
      return expect;
    }
    for (int i = 0; i < names.length; i++) {
      if (i != expect && same(b, from, to, names[i])) {
        return i;
      }
    }
    return -1;
  }

  private static boolean same(byte[] b, int from, int to, byte[] name) {
    if (to - from != name.length) {
      return false;
    }
    for (int i = 0; i < name.length; i++) {
      if (b[from + i] != name[i]) {
        return false;
      }
    }
    return true;
  }

  private static int skipWs(byte[] b, int p) {
    while (p < b.length && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r')) {
      p++;
    }
    return p;
  }
}
