package io.cairn.engine.row;

/**
 * The column types cairn understands. Values inside a {@link Row} are represented as:
 * BIGINT → {@link Long}, DOUBLE → {@link Double}, TEXT → {@link String}, BOOLEAN → {@link Boolean},
 * TIMESTAMP → {@link Long} microseconds since the Unix epoch (UTC), DATE → {@link Long} days since
 * 1970-01-01, NUMERIC → {@link java.math.BigDecimal} in {@link Numeric}'s canonical form, INTERVAL →
 * {@link Interval} (months, days, microseconds), NULL →
 * always {@code null}.
 * Any column may hold SQL NULL ({@code null}).
 */
public enum Type {
  BIGINT,
  DOUBLE,
  TEXT,
  BOOLEAN,
  TIMESTAMP,
  DATE,
  NUMERIC,
  INTERVAL,
  NULL;

  /** Whether {@code value} is a valid Java representation for this type ({@code null} always is). */
  public boolean accepts(Object value) {
    if (value == null) {
      return true;
    }
    return switch (this) {
      case BIGINT, TIMESTAMP, DATE -> value instanceof Long;
      case DOUBLE -> value instanceof Double;
      case TEXT -> value instanceof String;
      case NUMERIC -> value instanceof java.math.BigDecimal;
      case INTERVAL -> value instanceof Interval;
      case BOOLEAN -> value instanceof Boolean;
      case NULL -> false;
    };
  }

  /**
   * Whether values of this type are {@link Long}s (BIGINT, TIMESTAMP, DATE): held in {@code long}
   * columns, compared, hashed and sorted as {@code long}s on the operators' typed paths.
   */
  public boolean isLong() {
    return this == BIGINT || this == TIMESTAMP || this == DATE;
  }

  /** Microseconds in a day: a DATE's midnight as a TIMESTAMP is {@code days * MICROS_PER_DAY}. */
  public static final long MICROS_PER_DAY = 86_400_000_000L;

  /** Whether values of this type are numbers (BIGINT, DOUBLE, NUMERIC). */
  public boolean isNumeric() {
    return this == BIGINT || this == DOUBLE || this == NUMERIC;
  }

  /**
   * The type of arithmetic on two numbers (or NULL), as PostgreSQL's: DOUBLE if either is one,
   * else NUMERIC if either is one, else BIGINT.
   */
  public static Type arithmetic(Type a, Type b) {
    if (a == DOUBLE || b == DOUBLE) {
      return DOUBLE;
    }
    return a == NUMERIC || b == NUMERIC ? NUMERIC : BIGINT;
  }
}
