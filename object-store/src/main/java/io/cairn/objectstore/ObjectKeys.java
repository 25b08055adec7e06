package io.cairn.objectstore;

import io.cairn.objectstore.exceptions.InvalidKeyException;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;

/** Key validation and ordering shared by every backend. */
public final class ObjectKeys {
  /** Longest key in UTF-8 bytes (S3's limit). */
  public static final int MAX_KEY_BYTES = 1024;

  /**
   * Lexicographic order of the keys' UTF-8 bytes, which is S3's listing order. It differs from
   * {@link String#compareTo} only for characters above U+FFFF against U+E000..U+FFFF.
   */
  public static final Comparator<String> ORDER = ObjectKeys::compareUtf8;

  private ObjectKeys() {}

  /**
   * Checks {@code key} against the rules in {@link ObjectStore}'s javadoc.
   *
   * @return the key
   * @throws InvalidKeyException naming the key and the rule it breaks
   */
  public static String validate(String key) {
    if (key == null) {
      throw new InvalidKeyException("Invalid object key: null");
    }
    String problem = problem(key);
    if (problem != null) {
      throw new InvalidKeyException("Invalid object key '" + printable(key) + "': " + problem);
    }
    return key;
  }

  /** Checks a listing prefix: "" or a string that could start a valid key. */
  public static String validatePrefix(String prefix) {
    if (prefix == null) {
      throw new InvalidKeyException("Invalid key prefix: null");
    }
    if (prefix.startsWith("/") || prefix.indexOf('\\') >= 0 || hasControl(prefix)) {
      throw new InvalidKeyException(
          "Invalid key prefix '" + printable(prefix) + "': must be relative, without '\\' or control characters");
    }
    return prefix;
  }

  private static String problem(String key) {
    if (key.isEmpty()) {
      return "empty";
    }
    if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
      return "longer than " + MAX_KEY_BYTES + " UTF-8 bytes";
    }
    if (hasControl(key)) {
      return "contains a control character";
    }
    if (key.indexOf('\\') >= 0) {
      return "contains '\\'";
    }
    if (key.startsWith("/")) {
      return "must be relative (no leading '/')";
    }
    if (key.endsWith("/")) {
      return "must not end with '/'";
    }
    for (String segment : key.split("/", -1)) {
      if (segment.isEmpty()) {
        return "contains an empty segment ('//')";
      }
      if (segment.equals(".") || segment.equals("..")) {
        return "contains a '" + segment + "' segment";
      }
    }
    return null;
  }

  private static boolean hasControl(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        return true;
      }
    }
    return false;
  }

  private static String printable(String key) {
    StringBuilder sb = new StringBuilder();
    int limit = Math.min(key.length(), 200);
    for (int i = 0; i < limit; i++) {
      char c = key.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        sb.append(String.format(java.util.Locale.ROOT, "\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    if (key.length() > limit) {
      sb.append("...(").append(key.length()).append(" chars)");
    }
    return sb.toString();
  }

  static int compareUtf8(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char ca = a.charAt(i);
      char cb = b.charAt(i);
      if (ca != cb) {
        // surrogates (U+D800..U+DFFF) encode code points above U+FFFF, which sort after U+E000..U+FFFF in UTF-8
        boolean sa = Character.isSurrogate(ca);
        boolean sb = Character.isSurrogate(cb);
        if (sa != sb && (ca >= 0xE000 || cb >= 0xE000)) {
          return sa ? 1 : -1;
        }
        return Character.compare(ca, cb);
      }
    }
    return Integer.compare(a.length(), b.length());
  }
}
