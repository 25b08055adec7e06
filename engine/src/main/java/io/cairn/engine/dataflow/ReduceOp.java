package io.cairn.engine.dataflow;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.trace.Spine;
import io.cairn.engine.trace.Values;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Group-by with COUNT, SUM, AVG, MIN, MAX.
 *
 * <p>State: an <em>accumulator</em> arrangement (group key → one row holding COUNT(*), and per
 * aggregate its running sum / non-null count, or its current MIN/MAX), so invertible aggregates
 * are maintained in O(1) per update without keeping the input; and, for each MIN or MAX, an
 * arrangement of the group's non-null input values with their counts, so a retraction of the
 * current minimum finds the next one. The values are read only then: a tick that retracts no
 * value at or past the current extremum takes the better of it and the values the tick adds, so
 * a MAX over a group of millions costs a tick its updates. For every group touched in a tick the
 * operator derives the old output from the old accumulator and emits {@code -old, +new} when they
 * differ. A group with no rows has no output row — except without GROUP BY, where SQL's one row
 * stands for no rows (COUNT 0, the other aggregates NULL): emitted when the view is computed
 * afresh and whenever the last input row leaves.
 *
 * <p>Aggregates over BIGINT or DOUBLE only (the common shape: COUNT, SUM, AVG, MIN, MAX, with GROUP
 * BY or without) take the typed path of {@link TypedReduce}: same state, same results, no boxed
 * accumulators or values. Built with {@code
 * typedReduce} false (tests, through {@code Engine.Builder.typedReduce}), every shape takes the
 * general path: the typed path's oracle.
 */
final class ReduceOp extends Operator {
  private final int[] groupBy;
  private final Aggregate[] aggs;
  private final int[] slot; // first accumulator column of each aggregate
  private final Arrangement acc;
  private final Arrangement[] values; // per aggregate: null unless MIN/MAX
  private final int accWidth;
  private final TypedReduce[] typed; // per shard; null when the shape does not fit or the typed path is off
  private volatile boolean hydrating = true;
  /** Group-ticks of a MIN or MAX decided without reading the group's values, and with (for tests: both paths must be reached). */
  static final java.util.concurrent.atomic.LongAdder EXTREMA_WITHOUT_READ = new java.util.concurrent.atomic.LongAdder();
  static final java.util.concurrent.atomic.LongAdder EXTREMA_READ = new java.util.concurrent.atomic.LongAdder();

  ReduceOp(
      String name, Operator input, int[] groupBy, List<Aggregate> aggregates, Schema schema, int shards,
      boolean typedReduce) {
    super(schema, List.of(input), shards);
    this.groupBy = groupBy;
    this.aggs = aggregates.toArray(new Aggregate[0]);
    this.slot = new int[aggs.length];
    List<Column> accCols = new ArrayList<>();
    accCols.add(Column.of("count", Type.BIGINT));
    this.values = new Arrangement[aggs.length];
    Schema keySchema = input.schema().select(groupBy);
    for (int a = 0; a < aggs.length; a++) {
      Aggregate g = aggs[a];
      slot[a] = accCols.size();
      switch (g.kind()) {
        case COUNT -> {
          if (g.column() >= 0) {
            accCols.add(Column.of("a" + a + "_nonnull", Type.BIGINT));
          }
        }
        case SUM, AVG -> {
          accCols.add(Column.of("a" + a + "_sum", g.inputType() == Type.DOUBLE || g.inputType() == Type.NUMERIC
              || g.inputType() == Type.INTERVAL ? g.inputType() : Type.BIGINT));
          accCols.add(Column.of("a" + a + "_nonnull", Type.BIGINT));
        }
        case MIN, MAX -> {
          accCols.add(Column.of("a" + a + "_value", g.inputType()));
          values[a] =
              new Arrangement(
                  name + "-values" + a, keySchema, Schema.of(Column.of("value", g.inputType())), shards);
        }
      }
    }
    this.accWidth = accCols.size();
    this.acc = new Arrangement(name + "-acc", keySchema, new Schema(accCols), shards);
    TypedReduce[] perShard = new TypedReduce[shards];
    for (int s = 0; s < shards && typedReduce; s++) {
      perShard[s] = TypedReduce.of(input.schema(), groupBy, aggs, slot, acc, values);
    }
    this.typed = perShard[0] == null ? null : perShard;
  }

  @Override
  public int[] exchangeKey(int input) {
    return groupBy;
  }

  /**
   * An output row starts with its group's key columns (in {@code groupBy} order), and the group's
   * input updates were routed by those values: the output is sharded by its first columns.
   */
  @Override
  public int[] partitioning() {
    int[] out = new int[groupBy.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = i;
    }
    return out;
  }

  @Override
  public void setHydrating(boolean value) {
    hydrating = value;
  }

  /** Without GROUP BY, the first tick of a view computed afresh emits the row of no rows even when no input comes. */
  @Override
  public boolean runsWithoutInput() {
    return groupBy.length == 0 && hydrating;
  }

  @Override
  public void process(int shard, long tick, Rows[] in) {
    if (typed != null && typed[shard].process(shard, tick, in[0], out(shard), hydrating)) {
      return;
    }
    List<Keyed> d = Keyed.sort(in[0], groupBy, false);
    boolean global = groupBy.length == 0;
    if (global && hydrating && d.isEmpty() && shard == Row.EMPTY.shardOf(groupBy, shards())) {
      out(shard).add(output(Row.EMPTY, Row.wrap(initial())), 1); // the state is empty: nothing was emitted before
      return;
    }
    if (d.isEmpty()) {
      return;
    }
    Spine.Reader accReader = acc.spine(shard).reader();
    Spine.Reader[] valueReaders = new Spine.Reader[aggs.length];
    for (int a = 0; a < aggs.length; a++) {
      if (values[a] != null) {
        valueReaders[a] = values[a].spine(shard).reader();
      }
    }
    Values vals = new Values();
    Rows out = out(shard);
    int i = 0;
    while (i < d.size()) {
      Row key = d.get(i).key();
      int start = i;
      while (i < d.size() && d.get(i).key().equals(key)) {
        i++;
      }
      vals.clear();
      accReader.values(key, vals);
      vals.consolidate();
      Row oldAcc = vals.size() == 0 ? null : vals.val(0);
      Object[] next = oldAcc == null ? initial() : oldAcc.toArray();
      for (int j = start; j < i; j++) {
        accumulate(next, d.get(j).row(), d.get(j).diff());
      }
      settle(next);
      for (int a = 0; a < aggs.length; a++) {
        if (values[a] != null) {
          Object old = oldAcc == null ? null : oldAcc.get(slot[a]);
          next[slot[a]] = extremum(shard, tick, a, key, d, start, i, valueReaders[a], vals, old);
        }
      }
      Row newAcc = (Long) next[0] == 0 ? null : Row.wrap(next);
      if (!Objects.equals(oldAcc, newAcc)) {
        if (oldAcc != null) {
          acc.stage(shard, key, oldAcc, tick, -1);
        }
        if (newAcc != null) {
          acc.stage(shard, key, newAcc, tick, 1);
        }
      }
      // without GROUP BY the row of no rows stands for a missing accumulator (it was emitted unless this is the first tick)
      Row oldOut = oldAcc != null ? output(key, oldAcc) : global && !hydrating ? output(key, Row.wrap(initial())) : null;
      Row newOut = newAcc != null ? output(key, newAcc) : global ? output(key, Row.wrap(initial())) : null;
      if (!Objects.equals(oldOut, newOut)) {
        if (oldOut != null) {
          out.add(oldOut, -1);
        }
        if (newOut != null) {
          out.add(newOut, 1);
        }
      }
    }
  }

  private Object[] initial() {
    Object[] v = new Object[accWidth];
    v[0] = 0L;
    for (int a = 0; a < aggs.length; a++) {
      switch (aggs[a].kind()) {
        case COUNT -> {
          if (aggs[a].column() >= 0) {
            v[slot[a]] = 0L;
          }
        }
        case SUM, AVG -> {
          v[slot[a]] = zero(aggs[a].inputType());
          v[slot[a] + 1] = 0L;
        }
        case MIN, MAX -> v[slot[a]] = null;
      }
    }
    return v;
  }

  /** The running sum's start: exact zero of the input's type (a DOUBLE 0.0, a NUMERIC 0, an INTERVAL of nothing, a BIGINT 0). */
  private static Object zero(Type input) {
    return switch (input) {
      case DOUBLE -> 0.0;
      case NUMERIC -> java.math.BigDecimal.ZERO;
      case INTERVAL -> io.cairn.engine.row.Interval.ZERO;
      default -> 0L;
    };
  }

  /**
   * After all of a group's updates of the tick: a sum over no values is reset to an exact zero (no
   * drift). Not per update: within a tick a retraction can come before its insertion (an anti-join
   * emits {@code -r} then {@code +r}), and the count of values then passes through 0 while the sum
   * is not 0 — resetting there lost the other values' part of the sum (TPC-H Q22 found it).
   */
  private void settle(Object[] acc) {
    for (int a = 0; a < aggs.length; a++) {
      Aggregate g = aggs[a];
      if (g.column() >= 0 && (g.kind() == Aggregate.Kind.SUM || g.kind() == Aggregate.Kind.AVG) && (Long) acc[slot[a] + 1] == 0) {
        acc[slot[a]] = zero(g.inputType());
      }
    }
  }

  private void accumulate(Object[] acc, Row row, long diff) {
    acc[0] = (Long) acc[0] + diff;
    for (int a = 0; a < aggs.length; a++) {
      Aggregate g = aggs[a];
      if (g.column() < 0 || g.kind() == Aggregate.Kind.MIN || g.kind() == Aggregate.Kind.MAX) {
        continue;
      }
      Object v = row.get(g.column());
      if (v == null) {
        continue;
      }
      int s = slot[a];
      if (g.kind() == Aggregate.Kind.COUNT) {
        acc[s] = (Long) acc[s] + diff;
        continue;
      }
      acc[s + 1] = (Long) acc[s + 1] + diff;
      if (acc[s] instanceof Double sum) {
        acc[s] = sum + ((Number) v).doubleValue() * diff;
      } else if (acc[s] instanceof java.math.BigDecimal sum) {
        acc[s] = io.cairn.engine.row.Numeric.of(sum.add(((java.math.BigDecimal) v).multiply(java.math.BigDecimal.valueOf(diff))));
      } else if (acc[s] instanceof io.cairn.engine.row.Interval sum) {
        acc[s] = sum.plus(((io.cairn.engine.row.Interval) v).times(diff)); // field by field, as PostgreSQL sums intervals
      } else {
        acc[s] = Math.addExact((Long) acc[s], Math.multiplyExact((Long) v, diff));
      }
    }
  }

  /**
   * The group's new MIN or MAX (aggregate {@code a}) after the tick's updates {@code d[from, to)},
   * whose values it stages into the values arrangement. {@code old} is the extremum before the tick
   * (the accumulator's). When no update retracts a value at or before {@code old} in the
   * aggregate's order (for MIN: at or below it), the new extremum is {@code old} or the best value
   * the tick inserts: a value inserted and retracted within the tick that would beat {@code old} is
   * such a retraction. Then the group's values are not read; otherwise they are read whole, as a
   * retraction of the extremum needs the next one.
   */
  private Object extremum(
      int shard, long tick, int a, Row key, List<Keyed> d, int from, int to, Spine.Reader reader, Values scratch, Object old) {
    boolean min = aggs[a].kind() == Aggregate.Kind.MIN;
    int col = aggs[a].column();
    Object best = old;
    boolean readAll = false;
    for (int j = from; j < to; j++) {
      Object v = d.get(j).row().get(col);
      long diff = d.get(j).diff();
      if (v == null) {
        continue;
      }
      values[a].stage(shard, key, Row.of(v), tick, diff);
      if (diff < 0 && (old == null || !better(min, old, v))) {
        readAll = true;
      } else if (diff > 0 && (best == null || better(min, v, best))) {
        best = v;
      }
    }
    if (!readAll) {
      EXTREMA_WITHOUT_READ.increment();
      return best;
    }
    EXTREMA_READ.increment();
    scratch.clear();
    reader.values(key, scratch);
    for (int j = from; j < to; j++) {
      Object v = d.get(j).row().get(col);
      if (v != null) {
        scratch.add(Row.of(v), d.get(j).diff());
      }
    }
    scratch.consolidate();
    if (min) {
      for (int k = 0; k < scratch.size(); k++) {
        if (scratch.diff(k) > 0) {
          return scratch.val(k).get(0);
        }
      }
    } else {
      for (int k = scratch.size() - 1; k >= 0; k--) {
        if (scratch.diff(k) > 0) {
          return scratch.val(k).get(0);
        }
      }
    }
    return null;
  }

  private static boolean better(boolean min, Object candidate, Object than) {
    int c = Row.compareValues(candidate, than);
    return min ? c < 0 : c > 0;
  }

  private Row output(Row key, Row accRow) {
    Object[] v = new Object[groupBy.length + aggs.length];
    for (int k = 0; k < groupBy.length; k++) {
      v[k] = key.get(k);
    }
    for (int a = 0; a < aggs.length; a++) {
      Aggregate g = aggs[a];
      int s = slot[a];
      Object r =
          switch (g.kind()) {
            case COUNT -> g.column() < 0 ? accRow.get(0) : accRow.get(s);
            case SUM -> (Long) accRow.get(s + 1) > 0 ? accRow.get(s) : null;
            case AVG -> (Long) accRow.get(s + 1) <= 0 ? null
                : accRow.get(s) instanceof java.math.BigDecimal sum
                    ? io.cairn.engine.row.Numeric.divide(sum, java.math.BigDecimal.valueOf((Long) accRow.get(s + 1)))
                : accRow.get(s) instanceof io.cairn.engine.row.Interval sum ? sum.dividedBy((Long) accRow.get(s + 1))
                    : ((Number) accRow.get(s)).doubleValue() / (Long) accRow.get(s + 1);
            case MIN, MAX -> accRow.get(s);
          };
      v[groupBy.length + a] = r;
    }
    return Row.wrap(v);
  }

  @Override
  public List<Arrangement> arrangements() {
    List<Arrangement> all = new ArrayList<>();
    all.add(acc);
    for (Arrangement v : values) {
      if (v != null) {
        all.add(v);
      }
    }
    return all;
  }

  @Override
  public String describe() {
    return "Reduce " + List.of(aggs);
  }
}
