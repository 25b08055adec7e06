package io.cairn.engine.row;

import java.util.Locale;
import java.util.Objects;

/**
 * A named, typed column of a {@link Schema}. Names are stored lower-case.
 *
 * <p>A NUMERIC column may declare a precision and scale, as PostgreSQL's {@code NUMERIC(p, s)}:
 * values read into it are rounded to {@code s} decimals ({@link Numeric#fit}), and values read out
 * of it are shown with exactly {@code s} decimals ({@link Numeric#display}: {@code 8737.50}, not
 * {@code 8737.5}). The scale is a column's, not a value's: values stay in {@link Numeric}'s
 * canonical form inside the engine, so equal numbers stay equal objects. A computed column carries
 * the scale PostgreSQL gives it ({@code +}, {@code -}: the larger; {@code *}: the sum; SUM, MIN, MAX:
 * the input's), or none ({@link #NONE}: a division, AVG), shown as its canonical value. Neither
 * part is in {@link #toString()} or in {@link #equals}: a column's layout is its name and type, so
 * a schema's fingerprint, a snapshot's batches (whose schemas are read back from text) and the
 * arrangements they are restored into do not depend on how its values are shown.
 *
 * @param precision digits in all, or {@link #NONE}
 * @param scale digits after the point, or {@link #NONE}
 */
public record Column(String name, Type type, int precision, int scale) {
  /** No declared precision or scale. */
  public static final int NONE = -1;

  public Column {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    if (name.isBlank()) {
      throw new IllegalArgumentException("Cannot create column: name is blank");
    }
    name = name.toLowerCase(Locale.ROOT);
    if ((precision != NONE || scale != NONE) && type != Type.NUMERIC) {
      throw new IllegalArgumentException("Cannot create column '" + name + "': only a NUMERIC has a precision and scale, not a " + type);
    }
    if (scale < NONE || scale > Numeric.MAX_SCALE) {
      throw new IllegalArgumentException("Cannot create column '" + name + "': a NUMERIC's scale is 0 to " + Numeric.MAX_SCALE
          + " digits after the point, not " + scale);
    }
    if (precision != NONE && (precision < 1 || precision < scale || precision > Numeric.MAX_INTEGER_DIGITS + Numeric.MAX_SCALE)) {
      throw new IllegalArgumentException("Cannot create column '" + name + "': NUMERIC(" + precision + ", " + scale
          + ") is not a precision of 1 to 38 digits holding its scale");
    }
  }

  /** A column without a declared precision or scale. */
  public Column(String name, Type type) {
    this(name, type, NONE, NONE);
  }

  public static Column of(String name, Type type) {
    return new Column(name, type);
  }

  /** A {@code NUMERIC(precision, scale)} column; either may be {@link #NONE}. */
  public static Column numeric(String name, int precision, int scale) {
    return new Column(name, Type.NUMERIC, precision, scale);
  }

  /** This column under another name, with its type, precision and scale. */
  public Column renamed(String newName) {
    return new Column(newName, type, precision, scale);
  }

  /** The type as SQL declares it: {@code NUMERIC(15, 2)}, {@code NUMERIC}, {@code BIGINT}. */
  public String sqlType() {
    if (precision != NONE) {
      return type + "(" + precision + ", " + Math.max(scale, 0) + ")";
    }
    return type.toString();
  }

  /** Equal name and type (see the class comment: precision and scale are how values are shown, not their layout). */
  @Override
  public boolean equals(Object o) {
    return o instanceof Column c && c.name.equals(name) && c.type == type;
  }

  @Override
  public int hashCode() {
    return name.hashCode() * 31 + type.hashCode();
  }

  @Override
  public String toString() {
    return name + " " + type;
  }
}
