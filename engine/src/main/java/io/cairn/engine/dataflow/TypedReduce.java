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
 * The typed path of {@link ReduceOp} for the common shape: COUNT, SUM, AVG, MIN and MAX over BIGINT
 * or DOUBLE (any group key, or none). The old accumulator of each group is read from the
 * accumulator arrangement's columns without building rows, accumulated in a reused {@code long[]}
 * (a DOUBLE as its raw bits; a MIN or MAX of no values as a bit of a NULL mask) and staged back
 * column by column. It reads and writes the same arrangements, in the same layout, with the same
 * arithmetic and the same rule for when a MIN or MAX reads its group's values ({@code
 * ReduceOp.accumulate}, {@code ReduceOp.extremum}) as the general path, so the two may alternate
 * tick by tick. A DOUBLE is held as {@link Double#doubleToLongBits} (one NaN), so equal bits mean
 * {@link Double#equals}, as for rows, and values compare as {@link Double#compare}, as rows do.
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
  /** Per aggregate: the arrangement of a MIN's or MAX's values (key → value, with counts), else null. */
  private final Arrangement[] values;
  /** The accumulator columns that may be NULL (those of MIN and MAX), as a mask. */
  private final long extremaMask;

  private final OldAccumulator old;
  private final long[] next;
  private long nextNulls;
  private final long[] oneValue = new long[1];
  private final ValueEntries entries = new ValueEntries();
  private final Spine.Reader[] valueReaders; // per aggregate, opened by the first read of a tick

  private TypedReduce(int[] keyCols, boolean longKey, Aggregate[] aggs, int[] slot, boolean[] doubleSlot, Arrangement acc,
      Arrangement[] values) {
    this.keyCols = keyCols;
    this.longKey = longKey;
    this.aggs = aggs;
    this.slot = slot;
    this.doubleSlot = doubleSlot;
    this.accWidth = doubleSlot.length;
    this.acc = acc;
    this.outWidth = keyCols.length + aggs.length;
    this.values = values;
    long mask = 0;
    for (int g = 0; g < aggs.length; g++) {
      if (values[g] != null) {
        mask |= 1L << slot[g];
      }
    }
    this.extremaMask = mask;
    this.old = new OldAccumulator(accWidth);
    this.next = new long[accWidth];
    this.valueReaders = new Spine.Reader[aggs.length];
  }

  /**
   * The typed path for one shard (a new instance per shard), or null when the shape does not fit
   * (an accumulator column that is neither BIGINT nor DOUBLE, or more than 64 of them). {@code
   * values[g]} is the values arrangement of aggregate {@code g} when it is a MIN or MAX.
   */
  static TypedReduce of(Schema input, int[] groupBy, Aggregate[] aggs, int[] slot, Arrangement acc, Arrangement[] values) {
    Schema accSchema = acc.valSchema();
    if (accSchema.size() > 64) {
      return null; // the NULL mask is one long
    }
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
    return new TypedReduce(groupBy, longKey, aggs, slot, dbl, acc, values);
  }

  /**
   * Processes one shard's input of a tick; returns false, having done nothing, when the key is one
   * BIGINT/TIMESTAMP column and a group key is NULL, or without GROUP BY when there is no input (the
   * row of no rows of a view computed afresh): the caller then takes the general path. {@code
   * hydrating}: the view is being computed afresh (without GROUP BY, no row was emitted before).
   */
  boolean process(int shard, long tick, Rows in, Rows out, boolean hydrating) {
    Arrays.fill(valueReaders, null);
    if (!longKey) {
      if (keyCols.length == 0 && in.size() == 0) {
        return false;
      }
      processRows(shard, tick, in, out, hydrating);
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
      group(shard, tick, key, null, old.single(acc.name(), key), inputs, perm, start, i, out, false);
    }
    TYPED_TICKS.increment();
    return true;
  }

  /** As {@link #process}, for a key of any other shape: sorted and looked up as rows. */
  private void processRows(int shard, long tick, Rows in, Rows out, boolean hydrating) {
    int n = in.size();
    Row[] keys = new Row[n];
    for (int i = 0; i < n; i++) {
      keys[i] = keyCols.length == 0 ? Row.EMPTY : in.row(i).select(keyCols);
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
      group(shard, tick, 0, key, old.single(acc.name(), key), inputs, perm, start, i, out, hydrating);
    }
  }

  /**
   * One group: its input rows {@code perm[start, end)} accumulated onto its old accumulator (in
   * {@code old.current} when {@code hadOld}), the change staged and output. The key is {@code
   * rowKey}, or {@code key} when {@code rowKey} is null (a BIGINT key, not boxed). Without GROUP BY
   * (the key is the empty row) SQL's row of no rows stands for a missing accumulator, as in {@code
   * ReduceOp.process}.
   */
  private void group(int shard, long tick, long key, Row rowKey, boolean hadOld, Inputs inputs, int[] perm, int start, int end,
      Rows out, boolean hydrating) {
    if (hadOld) {
      System.arraycopy(old.current, 0, next, 0, accWidth);
      nextNulls = old.currentNulls;
    } else {
      initial(next);
      nextNulls = extremaMask;
    }
    for (int j = start; j < end; j++) {
      accumulate(next, inputs, perm[j]);
    }
    settle(next);
    for (int g = 0; g < aggs.length; g++) {
      if (values[g] != null) {
        extremum(shard, tick, g, key, rowKey, hadOld, inputs, perm, start, end);
      }
    }
    boolean hasNew = next[0] != 0;
    if (hadOld && hasNew && Arrays.equals(old.current, next) && old.currentNulls == nextNulls) {
      return;
    }
    if (hadOld) {
      stage(acc, shard, key, rowKey, old.current, old.currentNulls, tick, -1);
    }
    if (hasNew) {
      stage(acc, shard, key, rowKey, next, nextNulls, tick, 1);
    }
    if (keyCols.length == 0) {
      Row oldOut = hadOld ? output(rowKey, old.current, old.currentNulls) : hydrating ? null : noRows();
      Row newOut = hasNew ? output(rowKey, next, nextNulls) : noRows();
      if (!newOut.equals(oldOut)) {
        if (oldOut != null) {
          out.add(oldOut, -1);
        }
        out.add(newOut, 1);
      }
      return;
    }
    if (hadOld) {
      out.add(rowKey == null ? output(key, old.current, old.currentNulls) : output(rowKey, old.current, old.currentNulls), -1);
    }
    if (hasNew) {
      out.add(rowKey == null ? output(key, next, nextNulls) : output(rowKey, next, nextNulls), 1);
    }
  }

  /** Without GROUP BY, the row that stands for no rows: COUNT 0, the other aggregates NULL. */
  private Row noRows() {
    long[] none = new long[accWidth];
    initial(none);
    return output(Row.EMPTY, none, extremaMask);
  }

  private static void stage(Arrangement into, int shard, long key, Row rowKey, long[] vals, long nulls, long tick, long diff) {
    if (rowKey == null) {
      into.stageLongKey(shard, key, vals, nulls, tick, diff);
    } else {
      into.stageKeyLongs(shard, rowKey, vals, nulls, tick, diff);
    }
  }

  /**
   * The group's new MIN or MAX (aggregate {@code g}) into {@code next} and {@code nextNulls}, after
   * the tick's updates {@code perm[start, end)}, whose values it stages into the values arrangement.
   * As {@code ReduceOp.extremum}: the old extremum (the accumulator's, {@code next} on entry) or the
   * best value the tick inserts, unless an update retracts a value at or past the old extremum; then
   * the group's values are read whole and the best one still present is taken.
   */
  private void extremum(int shard, long tick, int g, long key, Row rowKey, boolean hadOld, Inputs in, int[] perm, int start,
      int end) {
    boolean min = aggs[g].kind() == Aggregate.Kind.MIN;
    int s = slot[g];
    boolean dbl = doubleSlot[s];
    long bit = 1L << s;
    boolean oldHas = hadOld && (nextNulls & bit) == 0;
    long oldValue = next[s];
    boolean has = oldHas;
    long best = oldValue;
    boolean readAll = false;
    long[] vs = in.values[g];
    boolean[] ns = in.nulls[g];
    for (int j = start; j < end; j++) {
      int i = perm[j];
      if (ns != null && ns[i]) {
        continue;
      }
      long v = vs[i];
      long diff = in.diffs[i];
      oneValue[0] = v;
      stage(values[g], shard, key, rowKey, oneValue, 0L, tick, diff);
      if (diff < 0 && (!oldHas || !better(min, dbl, oldValue, v))) {
        readAll = true;
      } else if (diff > 0 && (!has || better(min, dbl, v, best))) {
        best = v;
        has = true;
      }
    }
    if (readAll) {
      ReduceOp.EXTREMA_READ.increment();
      entries.clear(dbl);
      if (valueReaders[g] == null) {
        valueReaders[g] = values[g].spine(shard).reader();
      }
      if (rowKey == null) {
        valueReaders[g].forEachLong(key, entries);
      } else {
        valueReaders[g].forEach(rowKey, entries);
      }
      for (int j = start; j < end; j++) {
        int i = perm[j];
        if (ns == null || !ns[i]) {
          entries.add(vs[i], in.diffs[i]);
        }
      }
      has = entries.best(min);
      best = entries.bestValue;
    } else {
      ReduceOp.EXTREMA_WITHOUT_READ.increment();
    }
    next[s] = has ? best : 0L;
    nextNulls = has ? nextNulls & ~bit : nextNulls | bit;
  }

  /** Whether {@code candidate} comes before {@code than} in a MIN's order (after it, for a MAX): as longs or as doubles' bits. */
  private static boolean better(boolean min, boolean dbl, long candidate, long than) {
    int c = dbl ? Double.compare(Double.longBitsToDouble(candidate), Double.longBitsToDouble(than)) : Long.compare(candidate, than);
    return min ? c < 0 : c > 0;
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

  /** As {@code ReduceOp.accumulate}, on unboxed columns: input row {@code i} of {@code in} (MIN and MAX are {@link #extremum}'s). */
  private void accumulate(long[] a, Inputs in, int i) {
    long diff = in.diffs[i];
    a[0] += diff;
    for (int g = 0; g < aggs.length; g++) {
      Aggregate agg = aggs[g];
      if (agg.column() < 0 || values[g] != null || in.nulls[g] != null && in.nulls[g][i]) {
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
      if (agg.column() >= 0 && (agg.kind() == Aggregate.Kind.SUM || agg.kind() == Aggregate.Kind.AVG) && a[s + 1] == 0) {
        a[s] = doubleSlot[s] ? Double.doubleToLongBits(0.0) : 0L;
      }
    }
  }

  /** As {@code ReduceOp.output}; {@code nulls}: the accumulator's NULL mask. */
  private Row output(long key, long[] a, long nulls) {
    Object[] v = new Object[outWidth];
    v[0] = key;
    return outputAggregates(v, a, nulls);
  }

  /** As {@code ReduceOp.output}, for a key row. */
  private Row output(Row key, long[] a, long nulls) {
    Object[] v = new Object[outWidth];
    for (int k = 0; k < keyCols.length; k++) {
      v[k] = key.get(k);
    }
    return outputAggregates(v, a, nulls);
  }

  /** Fills the aggregates after the key in {@code v}. */
  private Row outputAggregates(Object[] v, long[] a, long nulls) {
    int first = keyCols.length;
    for (int g = 0; g < aggs.length; g++) {
      Aggregate agg = aggs[g];
      int s = slot[g];
      v[first + g] = switch (agg.kind()) {
        case COUNT -> agg.column() < 0 ? a[0] : a[s];
        case SUM -> a[s + 1] > 0 ? (doubleSlot[s] ? (Object) Double.longBitsToDouble(a[s]) : (Object) a[s]) : null;
        case AVG -> a[s + 1] > 0 ? (doubleSlot[s] ? Double.longBitsToDouble(a[s]) : (double) a[s]) / a[s + 1] : null;
        case MIN, MAX -> (nulls & (1L << s)) != 0 ? null
            : doubleSlot[s] ? (Object) Double.longBitsToDouble(a[s]) : (Object) a[s];
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
    private long[] masks = new long[8]; // per entry: its NULL columns
    private long[] diffs = new long[8];
    private int size;
    final long[] current;
    long currentNulls;

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
        masks = Arrays.copyOf(masks, size * 2);
        diffs = Arrays.copyOf(diffs, size * 2);
      }
      if (rows[size] == null) {
        rows[size] = new long[width];
      }
      long[] r = rows[size]; // the next free slot, reused from group to group
      long mask = 0;
      for (int c = 0; c < width; c++) {
        ColumnVector col = batch.valColumn(c);
        if ((extremaMask & (1L << c)) != 0 && col.isNull(i)) {
          mask |= 1L << c;
          r[c] = 0L;
        } else {
          r[c] = doubleSlot[c]
              ? Double.doubleToLongBits(((ColumnVector.Doubles) col).getDouble(i))
              : ((ColumnVector.Longs) col).getLong(i);
        }
      }
      long d = batch.diff(i);
      for (int k = 0; k < size; k++) {
        if (masks[k] == mask && Arrays.equals(rows[k], r)) {
          diffs[k] += d;
          return;
        }
      }
      masks[size] = mask;
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
      currentNulls = masks[live];
      return true;
    }

    private IllegalStateException conflict(String arrangement, Object key) {
      return new IllegalStateException("Cannot reduce group " + key + ": arrangement '" + arrangement
          + "' holds more than one accumulator for it (diffs " + Arrays.toString(Arrays.copyOf(diffs, size)) + ")");
    }
  }

  /**
   * A group's values of one MIN or MAX with their counts, as read from its values arrangement plus
   * the tick's updates: {@link #best} consolidates them and finds the extremum still present.
   */
  private static final class ValueEntries implements Spine.EntrySink {
    private long[] vals = new long[16];
    private long[] diffs = new long[16];
    private int size;
    private boolean dbl;
    long bestValue;

    void clear(boolean doubles) {
      size = 0;
      dbl = doubles;
    }

    @Override
    public void entry(Batch batch, int i) {
      ColumnVector col = batch.valColumn(0);
      add(dbl ? Double.doubleToLongBits(((ColumnVector.Doubles) col).getDouble(i)) : ((ColumnVector.Longs) col).getLong(i),
          batch.diff(i));
    }

    void add(long value, long diff) {
      if (size == vals.length) {
        vals = Arrays.copyOf(vals, size * 2);
        diffs = Arrays.copyOf(diffs, size * 2);
      }
      vals[size] = value;
      diffs[size++] = diff;
    }

    /**
     * Whether some value has a positive count; if so the least (for a MIN) or greatest (for a MAX)
     * such value goes into {@link #bestValue}. Values are ordered as longs, or doubles as {@link
     * Double#compare} orders them.
     */
    boolean best(boolean min) {
      long[] order = new long[size];
      int[] perm = new int[size];
      for (int k = 0; k < size; k++) {
        long v = vals[k];
        order[k] = dbl ? v ^ ((v >> 63) & Long.MAX_VALUE) : v; // a double's bits made to sort as Double.compare
        perm[k] = k;
      }
      perm = KeySort.radixPasses(order, false, perm, new int[size], size);
      boolean found = false;
      int k = 0;
      while (k < size) {
        long v = order[perm[k]];
        long count = 0;
        int first = perm[k];
        while (k < size && order[perm[k]] == v) {
          count += diffs[perm[k]];
          k++;
        }
        if (count > 0) {
          bestValue = vals[first];
          found = true;
          if (min) {
            return true;
          }
        }
      }
      return found;
    }
  }
}
