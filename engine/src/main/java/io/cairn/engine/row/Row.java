package io.cairn.engine.row;

import java.util.Arrays;
import java.util.List;

/**
 * An immutable tuple of values. Ordering is column by column, SQL NULL first, then by value
 * (numbers numerically, text by UTF-16 code units, false before true). {@link #hash()} is stable
 * across JVMs and is what assigns a key to a worker shard.
 */
public final class Row implements Comparable<Row> {
  public static final Row EMPTY = new Row(new Object[0]);

  private final Object[] values;
  private int hash;

  private Row(Object[] values) {
    this.values = values;
  }

  /** A row of the given values (copied). */
  public static Row of(Object... values) {
    return new Row(values.clone());
  }

  /** A row that takes ownership of {@code values}; the caller must not modify the array afterwards. */
  public static Row wrap(Object[] values) {
    return new Row(values);
  }

  public static Row of(List<?> values) {
    return new Row(values.toArray());
  }

  /**
   * An estimate of the heap this row holds: the row, its array and its values (a value shared with
   * other rows, such as a string the decoder interned, counted again), as {@code
   * ColumnVector.heapBytes} counts values: for the memory figures of state kept outside
   * arrangements.
   */
  public long heapBytes() {
    long b = 24L + 16L + 4L * values.length;
    for (Object v : values) {
      if (v instanceof String s) {
        b += 40 + s.length();
      } else if (v != null) {
        b += v instanceof Long || v instanceof Double || v instanceof Boolean ? 16 : 48;
      }
    }
    return b;
  }

  public int size() {
    return values.length;
  }

  public Object get(int i) {
    return values[i];
  }

  public boolean isNull(int i) {
    return values[i] == null;
  }

  public long getLong(int i) {
    return (Long) values[i];
  }

  public double getDouble(int i) {
    return (Double) values[i];
  }

  public String getText(int i) {
    return (String) values[i];
  }

  public boolean getBoolean(int i) {
    return (Boolean) values[i];
  }

  /** The values at {@code indices}, in that order. */
  public Row select(int[] indices) {
    Object[] out = new Object[indices.length];
    for (int i = 0; i < indices.length; i++) {
      out[i] = values[indices[i]];
    }
    return new Row(out);
  }

  public Row concat(Row other) {
    Object[] out = Arrays.copyOf(values, values.length + other.values.length);
    System.arraycopy(other.values, 0, out, values.length, other.values.length);
    return new Row(out);
  }

  /** Copies the values into {@code dst} from position {@code off}. */
  public void copyInto(Object[] dst, int off) {
    System.arraycopy(values, 0, dst, off, values.length);
  }

  public Object[] toArray() {
    return values.clone();
  }

  public List<Object> toList() {
    return Arrays.asList(values.clone());
  }

  /** Checks that every value fits its column's type; throws naming the column otherwise. */
  public void checkConforms(Schema schema) {
    if (schema.size() != values.length) {
      throw new IllegalArgumentException(
          "Cannot use row " + this + ": it has " + values.length + " values but the schema has " + schema.size() + " columns");
    }
    for (int i = 0; i < values.length; i++) {
      if (!schema.type(i).accepts(values[i])) {
        throw new IllegalArgumentException(
            "Cannot use row " + this + ": column '" + schema.column(i).name() + "' is " + schema.type(i)
                + " but the value is a " + values[i].getClass().getSimpleName());
      }
    }
  }

  /** Compares two single values of the same type (nulls first). */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static int compareValues(Object a, Object b) {
    if (a == b) {
      return 0;
    }
    if (a == null) {
      return -1;
    }
    if (b == null) {
      return 1;
    }
    if (a instanceof Long x && b instanceof Long y) {
      return Long.compare(x, y);
    }
    if ((a instanceof java.math.BigDecimal || b instanceof java.math.BigDecimal) && !(a instanceof Double) && !(b instanceof Double)) {
      return Numeric.of(a).compareTo(Numeric.of(b)); // NUMERIC with NUMERIC or BIGINT: exactly
    }
    if (a instanceof Number x && b instanceof Number y) {
      return Double.compare(x.doubleValue(), y.doubleValue());
    }
    return ((Comparable) a).compareTo(b);
  }

  @Override
  public int compareTo(Row o) {
    int n = Math.min(values.length, o.values.length);
    for (int i = 0; i < n; i++) {
      int c = compareValues(values[i], o.values[i]);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(values.length, o.values.length);
  }

  /** A well-mixed hash, stable across JVMs (used for sharding). */
  public int hash() {
    int h = hash;
    if (h == 0) {
      h = hashOf(values, null);
      hash = h;
    }
    return h;
  }

  /** The hash of {@code values[cols]} ({@code cols} null: all values); never 0. */
  private static int hashOf(Object[] values, int[] cols) {
    long acc = 0x9E3779B97F4A7C15L;
    int n = cols == null ? values.length : cols.length;
    for (int i = 0; i < n; i++) {
      acc = mix(acc * 31 + valueHash(values[cols == null ? i : cols[i]]));
    }
    int h = (int) (acc ^ (acc >>> 32));
    return h == 0 ? 1 : h;
  }

  /** The shard of the key formed by columns {@code cols}: {@code select(cols).shard(shards)} without building the key. */
  public int shardOf(int[] cols, int shards) {
    return Math.floorMod(hashOf(values, cols), shards);
  }

  /** Hash of one value, consistent with {@link #hash()} for single-column rows built from columns. */
  public static long valueHash(Object v) {
    if (v == null) {
      return 0x5bd1e995L;
    }
    if (v instanceof Long l) {
      return l;
    }
    if (v instanceof Double d) {
      return Double.doubleToLongBits(d == 0.0 ? 0.0 : d);
    }
    if (v instanceof Boolean b) {
      return b ? 1231 : 1237;
    }
    return v.hashCode();
  }

  static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb9fe1a85ec53L;
    return z ^ (z >>> 33);
  }

  /** The worker shard that owns this key among {@code shards}. */
  public int shard(int shards) {
    return Math.floorMod(hash(), shards);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof Row r) || r.values.length != values.length) {
      return false;
    }
    if (hash != 0 && r.hash != 0 && hash != r.hash) {
      return false;
    }
    // the same as compareTo(r) == 0, without the comparison chain: a column's values share one class
    for (int i = 0; i < values.length; i++) {
      Object a = values[i];
      Object b = r.values[i];
      if (a == b) {
        continue;
      }
      if (a == null || b == null) {
        return false;
      }
      if (a.getClass() == b.getClass() ? !a.equals(b) : compareValues(a, b) != 0) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return hash();
  }

  @Override
  public String toString() {
    return Arrays.toString(values);
  }
}
