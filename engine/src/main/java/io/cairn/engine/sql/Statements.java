package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;

/** Splitting a request's text into statements. */
public final class Statements {
  private Statements() {}

  /**
   * The statements of {@code text}, separated by semicolons outside single-quoted strings (a
   * doubled quote inside a string toggles twice, so it stays inside); blank ones dropped, each
   * trimmed.
   */
  public static List<String> split(String text) {
    List<String> out = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean quoted = false;
    for (char c : text.toCharArray()) {
      if (c == '\'') {
        quoted = !quoted;
      }
      if (c == ';' && !quoted) {
        if (!cur.toString().isBlank()) {
          out.add(cur.toString().trim());
        }
        cur.setLength(0);
      } else {
        cur.append(c);
      }
    }
    if (!cur.toString().isBlank()) {
      out.add(cur.toString().trim());
    }
    return out;
  }
}
