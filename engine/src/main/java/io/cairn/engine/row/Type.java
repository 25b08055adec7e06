package io.cairn.engine.row;

/**
 * The column types cairn understands. Values inside a {@link Row} are represented as:
 * BIGINT → {@link Long}, DOUBLE → {@link Double}, TEXT → {@link String}, BOOLEAN → {@link Boolean},
 * TIMESTAMP → {@link Long} microseconds since the Unix epoch (UTC), NULL → always {@code null}.
 * Any column may hold SQL NULL ({@code null}).
 */
public enum Type {
  BIGINT,
  DOUBLE,
  TEXT,
  BOOLEAN,
  TIMESTAMP,
  NULL;

  /** Whether {@code value} is a valid Java representation for this type ({@code null} always is). */
  public boolean accepts(Object value) {
    if (value == null) {
      return true;
    }
    return switch (this) {
      case BIGINT, TIMESTAMP -> value instanceof Long;
      case DOUBLE -> value instanceof Double;
      case TEXT -> value instanceof String;
      case BOOLEAN -> value instanceof Boolean;
      case NULL -> false;
    };
  }

  /** Whether values of this type are numbers (BIGINT, DOUBLE). */
  public boolean isNumeric() {
    return this == BIGINT || this == DOUBLE;
  }
}
