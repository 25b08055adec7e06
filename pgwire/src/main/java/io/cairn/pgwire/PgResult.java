package io.cairn.pgwire;

import java.util.List;
import java.util.Objects;

/**
 * One statement's answer as the wire sends it: column names and types (none for a command),
 * rows of Java values, and the CommandComplete tag ("SELECT 3", "CREATE SOURCE", "SET").
 */
record PgResult(List<String> columns, List<PgType> types, List<List<Object>> rows, String tag) {
  PgResult {
    columns = List.copyOf(columns);
    types = List.copyOf(types);
    Objects.requireNonNull(rows, "rows");
    Objects.requireNonNull(tag, "tag");
    if (columns.size() != types.size()) {
      throw new IllegalArgumentException("Cannot make result: " + columns.size() + " columns but " + types.size() + " types");
    }
  }

  static PgResult command(String tag) {
    return new PgResult(List.of(), List.of(), List.of(), tag);
  }

  /** One text column, one row per value; tag "SELECT n" unless {@code tag} is given. */
  static PgResult text(String column, String tag, String... values) {
    List<List<Object>> rows = new java.util.ArrayList<>();
    for (String v : values) {
      rows.add(java.util.Collections.singletonList(v));
    }
    return new PgResult(List.of(column), List.of(PgType.TEXT), rows, tag == null ? "SELECT " + rows.size() : tag);
  }

  boolean hasColumns() {
    return !columns.isEmpty();
  }
}
