package io.cairn.engine.row;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/** An ordered list of uniquely named columns. */
public record Schema(List<Column> columns) {
  public static final Schema EMPTY = new Schema(List.of());

  public Schema {
    columns = List.copyOf(Objects.requireNonNull(columns, "columns"));
    Set<String> seen = new HashSet<>();
    for (Column c : columns) {
      if (!seen.add(c.name())) {
        throw new IllegalArgumentException("Cannot create schema: duplicate column '" + c.name() + "'");
      }
    }
  }

  public static Schema of(Column... columns) {
    return new Schema(List.of(columns));
  }

  private static final java.util.regex.Pattern COLUMN = java.util.regex.Pattern.compile(
      "\\s*(\\S+)\\s+([A-Za-z]+)\\s*(?:\\(\\s*(\\d+)\\s*(?:,\\s*(\\d+)\\s*)?\\))?\\s*");

  /**
   * Parses "name TYPE, name TYPE" (used by tests and configuration); a NUMERIC may give its
   * precision and scale, {@code price NUMERIC(15, 2)} ({@code NUMERIC(15)} is scale 0).
   */
  public static Schema parse(String text) {
    List<Column> cols = new ArrayList<>();
    if (text.isBlank()) {
      return EMPTY;
    }
    for (String part : text.split(",(?![^(]*\\))")) {
      java.util.regex.Matcher m = COLUMN.matcher(part);
      if (!m.matches()) {
        throw new IllegalArgumentException("Cannot parse column '" + part.trim() + "': expected 'name TYPE' or 'name NUMERIC(p, s)'");
      }
      Type type;
      try {
        type = Type.valueOf(m.group(2).toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("Cannot parse column '" + part.trim() + "': unknown type '" + m.group(2) + "'");
      }
      if (m.group(3) == null) {
        cols.add(new Column(m.group(1), type));
      } else if (type != Type.NUMERIC) {
        throw new IllegalArgumentException("Cannot parse column '" + part.trim() + "': only NUMERIC takes a precision and scale");
      } else {
        try {
          cols.add(Column.numeric(m.group(1), Integer.parseInt(m.group(3)), m.group(4) == null ? 0 : Integer.parseInt(m.group(4))));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("Cannot parse column '" + part.trim() + "': precision or scale out of range");
        }
      }
    }
    return new Schema(cols);
  }

  public int size() {
    return columns.size();
  }

  public Column column(int i) {
    return columns.get(i);
  }

  public Type type(int i) {
    return columns.get(i).type();
  }

  /** Whether some column is of type {@code t}. */
  public boolean has(Type t) {
    for (Column c : columns) {
      if (c.type() == t) {
        return true;
      }
    }
    return false;
  }

  /** Index of the column named {@code name} (case-insensitive), or -1. */
  public int indexOf(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    for (int i = 0; i < columns.size(); i++) {
      if (columns.get(i).name().equals(n)) {
        return i;
      }
    }
    return -1;
  }

  /** The columns at {@code indices}, in that order. */
  public Schema select(int... indices) {
    List<Column> cols = new ArrayList<>(indices.length);
    for (int i : indices) {
      cols.add(columns.get(i));
    }
    return new Schema(cols);
  }

  /** This schema's columns followed by {@code other}'s (names must stay unique). */
  public Schema concat(Schema other) {
    List<Column> cols = new ArrayList<>(columns);
    cols.addAll(other.columns);
    return new Schema(cols);
  }

  /** A stable fingerprint of names and types (hex SHA-256, 16 chars), stored with persisted batches. */
  public String fingerprint() {
    try {
      MessageDigest md = MessageDigest.getInstance("SHA-256");
      md.update(toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(md.digest()).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < columns.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(columns.get(i));
    }
    return sb.toString();
  }
}
