package io.cairn.engine.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a statement returns: column names and rows (empty for DDL) and a message ("CREATE SOURCE",
 * "SELECT 3", ...). {@link #render()} gives the plain-text table the CLI prints.
 */
public record Result(List<String> columns, List<List<Object>> rows, String message) {
  public Result {
    columns = List.copyOf(columns);
    List<List<Object>> copy = new ArrayList<>(rows.size());
    for (List<Object> r : rows) {
      if (r.size() != columns.size()) {
        throw new IllegalArgumentException("Cannot make result: a row has " + r.size() + " values for " + columns.size() + " columns");
      }
      copy.add(java.util.Collections.unmodifiableList(new ArrayList<>(r)));
    }
    rows = List.copyOf(copy);
    Objects.requireNonNull(message, "message");
  }

  /** A result with no rows. */
  public static Result message(String message) {
    return new Result(List.of(), List.of(), message);
  }

  /** A psql-like table followed by the message; just the message when there are no columns. */
  public String render() {
    if (columns.isEmpty()) {
      return message + "\n";
    }
    int n = columns.size();
    int[] width = new int[n];
    List<String[]> cells = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      width[i] = columns.get(i).length();
    }
    for (List<Object> r : rows) {
      String[] c = new String[n];
      for (int i = 0; i < n; i++) {
        c[i] = format(r.get(i));
        width[i] = Math.max(width[i], c[i].length());
      }
      cells.add(c);
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? " " : " | ").append(pad(columns.get(i), width[i]));
    }
    sb.append('\n');
    for (int i = 0; i < n; i++) {
      sb.append(i == 0 ? "" : "+").append("-".repeat(width[i] + 2));
    }
    sb.append('\n');
    for (String[] c : cells) {
      for (int i = 0; i < n; i++) {
        sb.append(i == 0 ? " " : " | ").append(pad(c[i], width[i]));
      }
      sb.append('\n');
    }
    sb.append('(').append(rows.size()).append(rows.size() == 1 ? " row)" : " rows)").append('\n');
    return sb.toString();
  }

  private static String format(Object v) {
    if (v == null) {
      return "NULL";
    }
    return String.valueOf(v).replace("\n", "\\n");
  }

  private static String pad(String s, int w) {
    return s + " ".repeat(w - s.length());
  }

  @Override
  public String toString() {
    return render();
  }
}
