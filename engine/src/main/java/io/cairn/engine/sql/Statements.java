package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;

/**
 * Splitting a request's text into statements: on semicolons that are {@link SqlScanner} symbols,
 * so never inside quotes ({@code '...'}, {@code "..."}) or comments ({@code --}, {@code /* *\/}).
 * The one splitter for every front end (HTTP, the PostgreSQL wire protocol).
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
    boolean meaningful = false;
    for (SqlScanner.Token t = SqlScanner.first(sql); t != null; t = t.next()) {
      if (t.isSymbol(';')) {
        add(sql, start, t.start(), meaningful, out);
        start = t.end();
        meaningful = false;
      } else if (!t.isBlank()) {
        meaningful = true;
      }
    }
    add(sql, start, sql.length(), meaningful, out);
    return out;
  }

  private static void add(String sql, int from, int to, boolean meaningful, List<Piece> out) {
    if (!meaningful) {
      return; // blank, or comments only
    }
    String s = sql.substring(from, to);
    int lead = 0;
    while (lead < s.length() && Character.isWhitespace(s.charAt(lead))) {
      lead++;
    }
    out.add(new Piece(s.strip(), from + lead));
  }
}
