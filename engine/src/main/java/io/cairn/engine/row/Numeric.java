package io.cairn.engine.row;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * NUMERIC values: exact decimals as {@link BigDecimal}s in one canonical form, so that equal
 * numbers are equal objects with one hash (state, joins and group keys compare them by {@code
 * equals}).
 *
 * <p>Canonical form: at most {@value #MAX_SCALE} digits after the point (more are rounded half
 * up, as PostgreSQL rounds), no trailing zeros ({@code 1.50} is {@code 1.5}, {@code 100} has scale
 * 0), at most {@value #MAX_INTEGER_DIGITS} digits before the point (more is "numeric field
 * overflow", as BIGINT overflow is an error). Every NUMERIC therefore fits Parquet's
 * DECIMAL(38, 18), which is how a snapshot stores it. Addition, subtraction and multiplication
 * are exact within those bounds; a division keeps {@value #MAX_SCALE} decimals (PostgreSQL keeps
 * at least 16 significant digits, so quotients may differ in their last digits).
 */
public final class Numeric {
  /** Digits kept after the point. */
  public static final int MAX_SCALE = 18;
  /** Digits allowed before the point: DECIMAL(38, 18) has 20. */
  public static final int MAX_INTEGER_DIGITS = 20;

  private Numeric() {}

  /**
   * {@code v} in canonical form.
   *
   * @throws ArithmeticException when it has more than {@value #MAX_INTEGER_DIGITS} digits before the point
   */
  public static BigDecimal of(BigDecimal v) {
    if (v.scale() > MAX_SCALE) {
      v = v.setScale(MAX_SCALE, RoundingMode.HALF_UP);
    }
    if (v.signum() == 0) {
      return BigDecimal.ZERO;
    }
    v = v.stripTrailingZeros();
    if (v.scale() < 0) {
      v = v.setScale(0);
    }
    if (v.precision() - v.scale() > MAX_INTEGER_DIGITS) {
      throw new ArithmeticException("numeric field overflow: " + v.toPlainString() + " has more than " + MAX_INTEGER_DIGITS
          + " digits before the point (NUMERIC holds up to 20 before and 18 after it)");
    }
    return v;
  }

  /** A BIGINT or NUMERIC value as a NUMERIC. */
  public static BigDecimal of(Object number) {
    if (number instanceof BigDecimal b) {
      return b;
    }
    if (number instanceof Long l) {
      return of(BigDecimal.valueOf(l));
    }
    throw new IllegalArgumentException("Cannot make a NUMERIC of " + number + " (" + number.getClass().getSimpleName() + ")");
  }

  /** The NUMERIC of a decimal text ({@code 12.34}, {@code -1e3}). */
  public static BigDecimal parse(String text) {
    return of(new BigDecimal(text.strip()));
  }

  /** {@code a / b}, rounded half up to {@value #MAX_SCALE} decimals. */
  public static BigDecimal divide(BigDecimal a, BigDecimal b) {
    if (b.signum() == 0) {
      throw new ArithmeticException("division by zero");
    }
    return of(a.divide(b, MAX_SCALE, RoundingMode.HALF_UP));
  }

  /**
   * {@code v} as a column of {@code column}'s precision and scale keeps it, in canonical form:
   * rounded half away from zero to the scale (as PostgreSQL stores into {@code NUMERIC(p, s)}).
   *
   * @throws ArithmeticException when the rounded value has more than {@code p - s} digits before
   *     the point (PostgreSQL's "numeric field overflow")
   */
  public static BigDecimal fit(BigDecimal v, Column column) {
    if (column.scale() != Column.NONE && v.scale() > column.scale()) {
      v = v.setScale(column.scale(), RoundingMode.HALF_UP);
    }
    if (column.precision() != Column.NONE && v.signum() != 0) {
      int integerDigits = v.precision() - v.scale();
      int allowed = column.precision() - Math.max(column.scale(), 0);
      if (integerDigits > allowed) {
        throw new ArithmeticException("numeric field overflow: column '" + column.name() + "' is " + column.sqlType()
            + " and holds values below 10^" + allowed + " in absolute value, not " + v.toPlainString());
      }
    }
    return of(v);
  }

  /**
   * A value of a column with {@code scale} digits after the point as it is shown: a NUMERIC with
   * exactly that many decimals ({@code 8737.50}); any other value, or a NUMERIC of a column
   * without a scale, as it is.
   */
  public static Object display(Object v, int scale) {
    if (scale >= 0 && v instanceof BigDecimal n && n.scale() < scale) {
      return n.setScale(scale);
    }
    return v;
  }
}
