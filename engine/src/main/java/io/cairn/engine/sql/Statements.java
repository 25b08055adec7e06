package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splitting a request's text into statements: on semicolons outside quotes ({@code '...'},
 * {@code "..."}, a doubled quote stays inside) and comments ({@code --}, {@code /* *\/}). The one
 * splitter for every front end (HTTP, the PostgreSQL wire protocol).
 */
public final class Statements {
  private Statements() {}

  /** One statement of a request and where it starts (0-based) in the request's text. */
  public record Piece(String text, int offset) {}

  /** The statements of {@code text}, each stripped; blank ones and ones of comments only dropped. */
  public static List<String> split(String text) {
    List<String> out = new ArrayList<>();
    for (Piece p : pieces(text)) {
      out.add(p.text());
    }
    return out;
  }

  /** {@link #split} with each statement's offset in {@code sql}. */
  public static List<Piece> pieces(String sql) {
    List<Piece> out = new ArrayList<>();
    int start = 0;
    int i = 0;
    int n = sql.length();
    while (i < n) {
      char c = sql.charAt(i);
      int past = skipComment(sql, i);
      if (past != i) {
        i = past;
      } else if (c == '\'' || c == '"') {
        i = skipQuoted(sql, i, c);
      } else if (c == ';') {
        add(sql, start, i, out);
        start = ++i;
      } else {
        i++;
      }
    }
    add(sql, start, n, out);
    return out;
  }

  private static void add(String sql, int from, int to, List<Piece> out) {
    String s = sql.substring(from, to);
    int lead = 0;
    while (lead < s.length() && Character.isWhitespace(s.charAt(lead))) {
      lead++;
    }
    String t = s.strip();
    if (!t.isEmpty() && !onlyComments(t)) {
      out.add(new Piece(t, from + lead));
    }
  }

  private static boolean onlyComments(String s) {
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      int past = skipComment(s, i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (past != i) {
        i = past;
      } else {
        return false;
      }
    }
    return true;
  }

  /**
   * The index just past the comment that starts at {@code i} ({@code -- ...} to the end of the
   * line, {@code /* ... *}{@code /}; an unterminated one runs to the end), or {@code i} when no
   * comment starts there.
   */
  public static int skipComment(String sql, int i) {
    int n = sql.length();
    if (sql.startsWith("--", i)) {
      int nl = sql.indexOf('\n', i);
      return nl < 0 ? n : nl;
    }
    if (sql.startsWith("/*", i)) {
      int end = sql.indexOf("*/", i + 2);
      return end < 0 ? n : end + 2;
    }
    return i;
  }

  /** The index just past the quoted text that starts at {@code i} with quote {@code q} (a doubled quote stays inside). */
  public static int skipQuoted(String sql, int i, char q) {
    int n = sql.length();
    i++;
    while (i < n) {
      if (sql.charAt(i) == q) {
        if (i + 1 < n && sql.charAt(i + 1) == q) {
          i += 2;
          continue;
        }
        return i + 1;
      }
      i++;
    }
    return n;
  }
}
