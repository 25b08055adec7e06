package io.cairn.engine.sql;

import io.cairn.engine.row.Type;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a statement returns: column names with their types, rows (empty for DDL) and a message
 * ("CREATE SOURCE", "SELECT 3", ...). This is the one result contract every server renders (HTTP
 * as a table, CSV or JSON; pgwire as RowDescription with each type's OID and DataRows); errors
 * are exceptions with a {@link SqlState}. A query's types are its plan's output schema, so a
 * column is typed even when every value in it is NULL. {@link #render()} gives the plain-text table
 * the CLI prints.
 */
public record Result(List<String> columns, List<Type> types, List<List<Object>> rows, String message) {
  public Result {
    columns = List.copyOf(columns);
    types = List.copyOf(types);
    if (types.size() != columns.size()) {
      throw new IllegalArgumentException("Cannot make result: " + types.size() + " types for " + columns.size() + " columns");
    }
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

  /** A result whose column types are those of its values ({@link Type#TEXT} for a column of NULLs only). */
  public Result(List<String> columns, List<List<Object>> rows, String message) {
    this(columns, typesOf(columns.size(), rows), rows, message);
  }

  private static List<Type> typesOf(int n, List<List<Object>> rows) {
    List<Type> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      Type t = Type.TEXT;
      for (List<Object> r : rows) {
        Object v = i < r.size() ? r.get(i) : null;
        if (v != null) {
          t = v instanceof Long || v instanceof Integer ? Type.BIGINT : v instanceof Double ? Type.DOUBLE
              : v instanceof Boolean ? Type.BOOLEAN : Type.TEXT;
          break;
        }
      }
      out.add(t);
    }
    return out;
  }

  /** A result with no rows. */
  public static Result message(String message) {
    return new Result(List.of(), List.of(), message);
  }

  /**
   * A psql-like table followed by the message; just the message when there are no columns. SQL
   * NULL prints as {@code NULL}; a text value that could be mistaken for it or for nothing (the
   * text {@code NULL}, an empty string, leading or trailing spaces) prints quoted ({@code 'NULL'},
   * {@code ''}); newlines print as {@code \\n}. Columns are padded to their display width (East
   * Asian wide characters and emoji take two cells, combining marks none).
   */
  public String render() {
    if (columns.isEmpty()) {
      return message + "\n";
    }
    int n = columns.size();
    int[] width = new int[n];
    List<String[]> cells = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      width[i] = displayWidth(columns.get(i));
    }
    for (List<Object> r : rows) {
      String[] c = new String[n];
      for (int i = 0; i < n; i++) {
        c[i] = format(display(r.get(i), types.get(i)));
        width[i] = Math.max(width[i], displayWidth(c[i]));
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

  /**
   * RFC 4180 CSV: a header line, then one line per row (CRLF line ends). SQL NULL is an empty
   * unquoted field; an empty string is {@code ""}; fields with a comma, quote, CR or LF are quoted.
   * Nothing for a statement without columns.
   */
  public String renderCsv() {
    if (columns.isEmpty()) {
      return "";
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      sb.append(i == 0 ? "" : ",").append(csv(columns.get(i)));
    }
    sb.append("\r\n");
    for (List<Object> r : rows) {
      for (int i = 0; i < r.size(); i++) {
        Object v = display(r.get(i), types.get(i));
        sb.append(i == 0 ? "" : ",").append(v == null ? "" : csv(String.valueOf(v)));
      }
      sb.append("\r\n");
    }
    return sb.toString();
  }

  private static String csv(String s) {
    if (s.isEmpty()) {
      return "\"\"";
    }
    if (s.indexOf(',') < 0 && s.indexOf('"') < 0 && s.indexOf('\n') < 0 && s.indexOf('\r') < 0) {
      return s;
    }
    return '"' + s.replace("\"", "\"\"") + '"';
  }

  /**
   * A value as people read it: a DATE's days as its ISO date ({@code 2024-03-31}), a NUMERIC as its
   * plain decimal text ({@code 0.0000001}, not {@code 1E-7}); any other value as it is.
   */
  public static Object display(Object v, Type type) {
    if (type == Type.DATE && v instanceof Long days) {
      return java.time.LocalDate.ofEpochDay(days).toString();
    }
    if (v instanceof java.math.BigDecimal n) {
      return n.toPlainString(); // never with an exponent
    }
    return v;
  }

  private static String format(Object v) {
    if (v == null) {
      return "NULL";
    }
    String s = String.valueOf(v).replace("\n", "\\n");
    if (v instanceof String && (s.isEmpty() || s.equals("NULL") || !s.strip().equals(s))) {
      return "'" + s.replace("'", "''") + "'";
    }
    return s;
  }

  private static String pad(String s, int w) {
    return s + " ".repeat(Math.max(0, w - displayWidth(s)));
  }

  /** Terminal cells taken by {@code s}: 2 for East Asian wide and fullwidth characters and emoji, 0 for combining marks. */
  public static int displayWidth(String s) {
    int w = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      int type = Character.getType(cp);
      if (type == Character.NON_SPACING_MARK || type == Character.ENCLOSING_MARK || type == Character.FORMAT
          || cp == 0x200D || (cp >= 0xFE00 && cp <= 0xFE0F)) {
        continue;
      }
      w += wide(cp) ? 2 : 1;
    }
    return w;
  }

  private static boolean wide(int cp) {
    return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF && cp != 0x303F)
        || (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F)
        || (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F)
        || (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x1F680 && cp <= 0x1F6FF) || (cp >= 0x20000 && cp <= 0x3FFFD);
  }

  @Override
  public String toString() {
    return render();
  }
}
