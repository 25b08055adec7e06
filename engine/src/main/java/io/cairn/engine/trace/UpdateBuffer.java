package io.cairn.engine.trace;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import java.util.Arrays;

/**
 * The updates of one arrangement shard staged in the open tick, appended column by column in
 * arrival order (each value unboxed once, no per-update object), and sealed into a sorted,
 * consolidated {@link Batch} at the tick's end. Not thread-safe: a shard's buffer belongs to the
 * worker that owns the shard.
 */
public final class UpdateBuffer {
  private final Schema keySchema;
  private final Schema valSchema;
  private final boolean[] doubleVal; // per value column: DOUBLE (for addLongKey)
  private ColumnVector.Builder[] keys;
  private ColumnVector.Builder[] vals;
  private long[] times;
  private long[] diffs;
  private int size;

  public UpdateBuffer(Schema keySchema, Schema valSchema) {
    this.keySchema = keySchema;
    this.valSchema = valSchema;
    this.doubleVal = new boolean[valSchema.size()];
    for (int c = 0; c < doubleVal.length; c++) {
      doubleVal[c] = valSchema.type(c) == io.cairn.engine.row.Type.DOUBLE;
    }
    reset(16);
  }

  private void reset(int capacity) {
    keys = new ColumnVector.Builder[keySchema.size()];
    vals = new ColumnVector.Builder[valSchema.size()];
    for (int c = 0; c < keys.length; c++) {
      keys[c] = ColumnVector.builder(keySchema.type(c), capacity);
    }
    for (int c = 0; c < vals.length; c++) {
      vals[c] = ColumnVector.builder(valSchema.type(c), capacity);
    }
    times = new long[capacity];
    diffs = new long[capacity];
    size = 0;
  }

  /** Appends one update; a zero diff is ignored. */
  public void add(Row key, Row val, long time, long diff) {
    if (diff == 0) {
      return;
    }
    ensureCapacity();
    for (int c = 0; c < keys.length; c++) {
      keys[c].add(key.get(c));
    }
    for (int c = 0; c < vals.length; c++) {
      vals[c].add(val.get(c));
    }
    times[size] = time;
    diffs[size] = diff;
    size++;
  }

  /**
   * Appends one update whose key is columns {@code keyCols} of {@code row} and whose value is
   * columns {@code valCols} (no key or value row is built); a zero diff is ignored.
   */
  public void addRow(Row row, int[] keyCols, int[] valCols, long time, long diff) {
    if (diff == 0) {
      return;
    }
    ensureCapacity();
    for (int c = 0; c < keys.length; c++) {
      keys[c].add(row.get(keyCols[c]));
    }
    for (int c = 0; c < vals.length; c++) {
      vals[c].add(row.get(valCols[c]));
    }
    times[size] = time;
    diffs[size] = diff;
    size++;
  }

  /**
   * Appends one update keyed by a single non-null BIGINT/TIMESTAMP {@code key}, whose values are
   * all BIGINT/TIMESTAMP or DOUBLE: {@code vals[c]} holds the long, or the double's bits ({@link
   * Double#doubleToLongBits}), and value {@code c} is NULL when bit {@code c} of {@code nulls} is set
   * (then {@code vals[c]} is ignored; at most 64 value columns). A zero diff is ignored.
   */
  public void addLongKey(long key, long[] vals, long nulls, long time, long diff) {
    if (diff == 0) {
      return;
    }
    ensureCapacity();
    keys[0].addLong(key);
    appendLongVals(vals, nulls, time, diff);
  }

  /** As {@link #addLongKey}, for a key of any shape: its values from {@code key}. */
  public void addKeyLongs(Row key, long[] vals, long nulls, long time, long diff) {
    if (diff == 0) {
      return;
    }
    ensureCapacity();
    for (int c = 0; c < keys.length; c++) {
      keys[c].add(key.get(c));
    }
    appendLongVals(vals, nulls, time, diff);
  }

  /** Appends the value columns of an update whose key columns were appended, as {@link #addLongKey} takes them. */
  private void appendLongVals(long[] vals, long nulls, long time, long diff) {
    for (int c = 0; c < this.vals.length; c++) {
      if ((nulls & (1L << c)) != 0) {
        this.vals[c].add(null);
      } else if (doubleVal[c]) {
        this.vals[c].addDouble(Double.longBitsToDouble(vals[c]));
      } else {
        this.vals[c].addLong(vals[c]);
      }
    }
    times[size] = time;
    diffs[size] = diff;
    size++;
  }

  /** Makes room for {@code more} updates beyond the staged ones, so that appending them grows nothing. */
  public void reserve(int more) {
    if (size + more > times.length) {
      int cap = Math.max(size + more, size * 2);
      times = Arrays.copyOf(times, cap);
      diffs = Arrays.copyOf(diffs, cap);
    }
    for (ColumnVector.Builder k : keys) {
      k.reserve(more);
    }
    for (ColumnVector.Builder v : vals) {
      v.reserve(more);
    }
  }

  private void ensureCapacity() {
    if (size == times.length) {
      times = Arrays.copyOf(times, size * 2);
      diffs = Arrays.copyOf(diffs, size * 2);
    }
  }

  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  /** Drops what is staged. */
  public void clear() {
    if (size > 0) {
      reset(16);
    }
  }

  /** Sorts and consolidates what is staged into a batch described by {@code description}, and empties the buffer. */
  public Batch seal(Description description) {
    ColumnVector[] k = new ColumnVector[keys.length];
    for (int c = 0; c < k.length; c++) {
      k[c] = keys[c].buildUntrimmed(); // read once by the seal, then dropped
    }
    ColumnVector[] v = new ColumnVector[vals.length];
    for (int c = 0; c < v.length; c++) {
      v[c] = vals[c].buildUntrimmed();
    }
    Batch b = Batch.sortAndConsolidate(keySchema, valSchema, k, v, times, diffs, size, description);
    int next = Math.max(16, Math.min(size, 1 << 16));
    reset(next);
    return b;
  }
}
