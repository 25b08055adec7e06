package io.cairn.engine.dataflow;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.row.KeySort;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.ColumnVector;
import io.cairn.engine.trace.Spine;
import java.util.Arrays;

/**
 * The typed path of {@link ReduceOp} for the common shape: only COUNT, SUM and AVG over BIGINT or
 * DOUBLE (any group key). The old accumulator of each group is read from the accumulator
 * arrangement's columns without building rows, accumulated in a reused {@code long[]} (a DOUBLE sum
 * as its raw bits) and staged back column by column. It reads and writes the same arrangement, in
 * the same layout, with the same arithmetic as the general path ({@code ReduceOp.accumulate}), so
 * the two may alternate tick by tick. A DOUBLE is held as {@link Double#doubleToLongBits} (one
 * NaN), so equal bits mean {@link Double#equals}, as for rows.
 *
 * <p>The tick's input is sorted by its group key:
 * <ul>
 *   <li>one BIGINT/TIMESTAMP key: as a {@code long[]} (radix), and the key is never boxed; a tick
 *       whose input holds a NULL key goes the general way;
 *   <li>any other key (TEXT, several columns, NULLs): as rows ({@link KeySort#byKey}: equal keys
 *       looked up once, only the distinct ones compared).
 * </ul>
 *
 * <p>One instance per operator shard: it keeps scratch buffers, and shards run on different
 * workers at the same time.
 */
final class TypedReduce {
  /** Shard-ticks that took this path (for tests: a property over the typed path must reach it). */
  static final java.util.concurrent.atomic.LongAdder TYPED_TICKS = new java.util.concurrent.atomic.LongAdder();
  private final int[] keyCols;
  /** One BIGINT/TIMESTAMP key column: the tick is sorted and looked up by {@code long}. */
  private final boolean longKey;
  private final Aggregate[] aggs;
  private final int[] slot;
  private final boolean[] doubleSlot; // per accumulator column: holds a double's raw bits
  private final int accWidth;
  private final Arrangement acc;
  private final int outWidth;

  private final OldAccumulator old;
  private final long[] next;

  private TypedReduce(int[] keyCols, boolean longKey, Aggregate[] aggs, int[] slot, boolean[] doubleSlot, Arrangement acc) {
    this.keyCols = keyCols;
    this.longKey = longKey;
    this.aggs = aggs;
    this.slot = slot;
    this.doubleSlot = doubleSlot;
    this.accWidth = doubleSlot.length;
    this.acc = acc;
    this.outWidth = keyCols.length + aggs.length;
    this.old = new OldAccumulator(accWidth);
    this.next = new long[accWidth];
  }

  /**
   * The typed path for one shard (a new instance per shard), or null when the shape does not fit (no GROUP BY, MIN/MAX,
   * an accumulator column that is neither BIGINT nor DOUBLE).
   */
  static TypedReduce of(Schema input, int[] groupBy, Aggregate[] aggs, int[] slot, Arrangement acc) {
    if (groupBy.length == 0) {
      return null; // the row of no rows is the general path's
    }
    for (Aggregate a : aggs) {
      if (a.kind() == Aggregate.Kind.MIN || a.kind() == Aggregate.Kind.MAX) {
        return null;
      }
    }
    Schema accSchema = acc.valSchema();
    boolean[] dbl = new boolean[accSchema.size()];
    for (int c = 0; c < dbl.length; c++) {
      Type t = accSchema.type(c);
      if (t == Type.DOUBLE) {
        dbl[c] = true;
      } else if (t != Type.BIGINT) {
        return null;
      }
    }
    boolean longKey = groupBy.length == 1 && input.type(groupBy[0]).isLong();
    return new TypedReduce(groupBy, longKey, aggs, slot, dbl, acc);
  }

  /**
   * Processes one shard's input of a tick; returns false, having done nothing, when the key is one
   * BIGINT/TIMESTAMP column and a group key is NULL (the caller then takes the general path).
   */
  boolean process(int shard, long tick, Rows in, Rows out) {
    if (!longKey) {
      processRows(shard, tick, in, out);
      TYPED_TICKS.increment();
      return true;
    }
    int n = in.size();
    long[] keys = new long[n];
    int keyCol = keyCols[0];
    for (int i = 0; i < n; i++) {
      Object k = in.row(i).get(keyCol);
      if (k == null) {
        return false;
      }
      keys[i] = (Long) k;
    }
    Inputs inputs = inputs(in);
    int[] perm = sortedByKey(keys, n);
    Spine.Reader reader = acc.spine(shard).reader();
    int i = 0;
    while (i < n) {
      long key = keys[perm[i]];
      int start = i;
      while (i < n && keys[perm[i]] == key) {
        i++;
      }
      old.clear();
      reader.forEachLong(key, old);
      group(shard, tick, key, null, old.single(acc.name(), key), inputs, perm, start, i, out);
    }
    TYPED_TICKS.increment();
    return true;
  }

  /** As {@link #process}, for a key of any other shape: sorted and looked up as rows. */
  private void processRows(int shard, long tick, Rows in, Rows out) {
    int n = in.size();
    Row[] keys = new Row[n];
    for (int i = 0; i < n; i++) {
      keys[i] = in.row(i).select(keyCols);
    }
    Inputs inputs = inputs(in);
    int[] perm = KeySort.byKey(keys, n);
    Spine.Reader reader = acc.spine(shard).reader();
    int i = 0;
    while (i < n) {
      Row key = keys[perm[i]];
      int start = i;
      while (i < n && keys[perm[i]].equals(key)) {
        i++;
      }
      old.clear();
      reader.forEach(key, old);
      group(shard, tick, 0, key, old.single(acc.name(), key), inputs, perm, start, i, out);
    }
  }

  /**
   * One group: its input rows {@code perm[start, end)} accumulated onto its old accumulator (in
   * {@code old.current} when {@code hadOld}), the change staged and output. The key is {@code
   * rowKey}, or {@code key} when {@code rowKey} is null (a BIGINT key, not boxed).
   */
  private void group(int shard, long tick, long key, Row rowKey, boolean hadOld, Inputs inputs, int[] perm, int start, int end,
      Rows out) {
    if (hadOld) {
      System.arraycopy(old.current, 0, next, 0, accWidth);
    } else {
      initial(next);
    }
    for (int j = start; j < end; j++) {
      accumulate(next, inputs, perm[j]);
    }
    settle(next);
    boolean hasNew = next[0] != 0;
    if (hadOld && hasNew && Arrays.equals(old.current, next)) {
      return;
    }
    if (hadOld) {
      stage(shard, key, rowKey, old.current, tick, -1);
      out.add(rowKey == null ? output(key, old.current) : output(rowKey, old.current), -1);
    }
    if (hasNew) {
      stage(shard, key, rowKey, next, tick, 1);
      out.add(rowKey == null ? output(key, next) : output(rowKey, next), 1);
    }
  }

  private void stage(int shard, long key, Row rowKey, long[] vals, long tick, long diff) {
    if (rowKey == null) {
      acc.stageLongKey(shard, key, vals, tick, diff);
    } else {
      acc.stageKeyLongs(shard, rowKey, vals, tick, diff);
    }
  }

  private static int[] sortedByKey(long[] keys, int n) {
    int[] perm = new int[n];
    for (int i = 0; i < n; i++) {
      perm[i] = i;
    }
    return KeySort.radixPasses(keys, false, perm, new int[n], n);
  }

  private void initial(long[] v) {
    Arrays.fill(v, 0L);
    for (int c = 0; c < accWidth; c++) {
      if (doubleSlot[c]) {
        v[c] = Double.doubleToLongBits(0.0);
      }
    }
  }

  /**
   * The aggregates' input values of a tick, read from the rows in arrival order: the groups then
   * take them in key order from these arrays, not from rows scattered over the heap.
   */
  private record Inputs(long[] diffs, long[][] values, boolean[][] nulls) {}

  /** {@code values[g][i]}: aggregate g's input in row i (a DOUBLE as its bits); {@code nulls[g]} null when none is NULL. */
  private Inputs inputs(Rows in) {
    int n = in.size();
    long[] diffs = new long[n];
    long[][] values = new long[aggs.length][];
    boolean[][] nulls = new boolean[aggs.length][];
    for (int g = 0; g < aggs.length; g++) {
      if (aggs[g].column() >= 0 && aggs[g].kind() != Aggregate.Kind.COUNT) {
        values[g] = new long[n];
      }
    }
    for (int i = 0; i < n; i++) {
      Row row = in.row(i);
      diffs[i] = in.diff(i);
      for (int g = 0; g < aggs.length; g++) {
        int col = aggs[g].column();
        if (col < 0) {
          continue;
        }
        Object v = row.get(col);
        if (v == null) {
          if (nulls[g] == null) {
            nulls[g] = new boolean[n];
          }
          nulls[g][i] = true;
        } else if (aggs[g].kind() != Aggregate.Kind.COUNT) {
          values[g][i] = doubleSlot[slot[g]] ? Double.doubleToLongBits(((Number) v).doubleValue()) : (Long) v;
        }
      }
    }
    return new Inputs(diffs, values, nulls);
  }

  /** As {@code ReduceOp.accumulate}, on unboxed columns: input row {@code i} of {@code in}. */
  private void accumulate(long[] a, Inputs in, int i) {
    long diff = in.diffs[i];
    a[0] += diff;
    for (int g = 0; g < aggs.length; g++) {
      Aggregate agg = aggs[g];
      if (agg.column() < 0 || in.nulls[g] != null && in.nulls[g][i]) {
        continue;
      }
      int s = slot[g];
      if (agg.kind() == Aggregate.Kind.COUNT) {
        a[s] += diff;
        continue;
      }
      a[s + 1] += diff;
      long v = in.values[g][i];
      if (doubleSlot[s]) {
        a[s] = Double.doubleToLongBits(Double.longBitsToDouble(a[s]) + Double.longBitsToDouble(v) * diff);
      } else {
        a[s] = Math.addExact(a[s], Math.multiplyExact(v, diff));
      }
    }
  }

  /**
   * After all of a group's updates of the tick: a sum over no values is reset to an exact zero (a
   * DOUBLE sum drifts). Not per update: within a tick a retraction can come before its insertion,
   * and the count of values then passes through 0 while the sum is not 0.
   */
  private void settle(long[] a) {
    for (int g = 0; g < aggs.length; g++) {
      Aggregate agg = aggs[g];
      int s = slot[g];
      if (agg.column() >= 0 && agg.kind() != Aggregate.Kind.COUNT && a[s + 1] == 0) {
        a[s] = doubleSlot[s] ? Double.doubleToLongBits(0.0) : 0L;
      }
    }
  }

  /** As {@code ReduceOp.output}. */
  private Row output(long key, long[] a) {
    Object[] v = new Object[outWidth];
    v[0] = key;
    return outputAggregates(v, a);
  }

  /** As {@code ReduceOp.output}, for a key row. */
  private Row output(Row key, long[] a) {
    Object[] v = new Object[outWidth];
    for (int k = 0; k < keyCols.length; k++) {
      v[k] = key.get(k);
    }
    return outputAggregates(v, a);
  }

  /** Fills the aggregates after the key in {@code v}. */
  private Row outputAggregates(Object[] v, long[] a) {
    int first = keyCols.length;
    for (int g = 0; g < aggs.length; g++) {
      Aggregate agg = aggs[g];
      int s = slot[g];
      v[first + g] = switch (agg.kind()) {
        case COUNT -> agg.column() < 0 ? a[0] : a[s];
        case SUM -> a[s + 1] > 0 ? (doubleSlot[s] ? (Object) Double.longBitsToDouble(a[s]) : (Object) a[s]) : null;
        case AVG -> a[s + 1] > 0 ? (doubleSlot[s] ? Double.longBitsToDouble(a[s]) : (double) a[s]) / a[s + 1] : null;
        case MIN, MAX -> throw new IllegalStateException("MIN/MAX take the general path");
      };
    }
    return Row.wrap(v);
  }

  /**
   * The accumulator entries stored under one key, consolidated: a group has at most one live
   * accumulator (count +1); entries of older ticks not yet merged cancel out here.
   */
  private final class OldAccumulator implements Spine.EntrySink {
    private static final int CONFLICT = -2;
    private final int width;
    private long[][] rows = new long[8][];
    private long[] diffs = new long[8];
    private int size;
    final long[] current;

    OldAccumulator(int width) {
      this.width = width;
      this.current = new long[width];
    }

    void clear() {
      size = 0;
    }

    @Override
    public void entry(Batch batch, int i) {
      if (size == rows.length) {
        rows = Arrays.copyOf(rows, size * 2);
        diffs = Arrays.copyOf(diffs, size * 2);
      }
      if (rows[size] == null) {
        rows[size] = new long[width];
      }
      long[] r = rows[size]; // the next free slot, reused from group to group
      for (int c = 0; c < width; c++) {
        ColumnVector col = batch.valColumn(c);
        r[c] = doubleSlot[c]
            ? Double.doubleToLongBits(((ColumnVector.Doubles) col).getDouble(i))
            : ((ColumnVector.Longs) col).getLong(i);
      }
      long d = batch.diff(i);
      for (int k = 0; k < size; k++) {
        if (Arrays.equals(rows[k], r)) {
          diffs[k] += d;
          return;
        }
      }
      diffs[size++] = d;
    }

    /** Whether the group has a live accumulator (then in {@link #current}); at most one may be live. */
    boolean single(String arrangement, long key) {
      int live = live();
      if (live == CONFLICT) {
        throw conflict(arrangement, key);
      }
      return take(live);
    }

    /** As {@link #single(String, long)}, for a key row. */
    boolean single(String arrangement, Row key) {
      int live = live();
      if (live == CONFLICT) {
        throw conflict(arrangement, key);
      }
      return take(live);
    }

    /** The live entry's index, -1 for none, or {@link #CONFLICT}. */
    private int live() {
      int live = -1;
      for (int k = 0; k < size; k++) {
        if (diffs[k] == 0) {
          continue;
        }
        if (diffs[k] != 1 || live >= 0) {
          return CONFLICT;
        }
        live = k;
      }
      return live;
    }

    private boolean take(int live) {
      if (live < 0) {
        return false;
      }
      System.arraycopy(rows[live], 0, current, 0, width);
      return true;
    }

    private IllegalStateException conflict(String arrangement, Object key) {
      return new IllegalStateException("Cannot reduce group " + key + ": arrangement '" + arrangement
          + "' holds more than one accumulator for it (diffs " + Arrays.toString(Arrays.copyOf(diffs, size)) + ")");
    }
  }
}
