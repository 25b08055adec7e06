package io.cairn.engine.dataflow;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedView;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * MIN and MAX of a BIGINT and of a DOUBLE column against an oracle that scans each group, tick by
 * tick: with GROUP BY and without, 1–3 workers, NULL values, values present several times, ticks
 * that retract the current MIN or MAX (the group's values are read for the next one) or only other
 * values (decided without a read), and ticks that insert and retract one value (netting to
 * nothing). DOUBLE values include -0.0 beside 0.0 and NaN, which order as {@link Double#compare}
 * orders them. Run on the typed path ({@link TypedReduce}) and on the general one.
 */
class ExtremumPropertyTest {
  static final Schema S = Schema.of(Column.of("g", Type.BIGINT), Column.of("v", Type.BIGINT), Column.of("d", Type.DOUBLE));
  static final List<Aggregate> AGGS = List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.MIN, 1, Type.BIGINT),
      new Aggregate(Aggregate.Kind.MAX, 1, Type.BIGINT), new Aggregate(Aggregate.Kind.MIN, 2, Type.DOUBLE),
      new Aggregate(Aggregate.Kind.MAX, 2, Type.DOUBLE));
  static final Double[] SPECIAL = {-0.0, 0.0, Double.NaN, null};

  record Sample(List<List<Rec>> ticks, int workers, boolean grouped) {
    @Override
    public String toString() {
      return "workers=" + workers + " grouped=" + grouped + " ticks=" + ticks;
    }
  }

  static Gen<Sample> samples() {
    return (Random r, int size) -> {
      boolean grouped = r.nextBoolean();
      int groups = grouped ? 1 + r.nextInt(4) : 1;
      int range = 1 + r.nextInt(60);
      List<Row> live = new ArrayList<>();
      List<List<Rec>> ticks = new ArrayList<>();
      int nTicks = 1 + r.nextInt(12);
      for (int t = 0; t < nTicks; t++) {
        List<Rec> recs = new ArrayList<>();
        int n = r.nextInt(Math.max(1, size / 2) + 2);
        for (int i = 0; i < n; i++) {
          int kind = r.nextInt(6);
          if (kind == 0 && !live.isEmpty()) { // the group's extreme value: its MIN or its MAX goes
            boolean low = r.nextBoolean();
            int col = 1 + r.nextInt(2);
            Row pick = null;
            for (Row x : live) {
              if (x.get(col) != null && (pick == null
                  || (low ? Row.compareValues(x.get(col), pick.get(col)) < 0 : Row.compareValues(x.get(col), pick.get(col)) > 0))) {
                pick = x;
              }
            }
            if (pick != null) {
              live.remove(pick);
              recs.add(Rec.append(pick, -1));
            }
          } else if (kind == 1 && !live.isEmpty()) {
            recs.add(Rec.append(live.remove(r.nextInt(live.size())), -1));
          } else if (kind == 2) { // in and out within the tick
            Row row = Row.of((long) r.nextInt(groups), (long) (r.nextInt(3 * range) - range), (r.nextInt(3 * range) - range) * 0.5);
            recs.add(Rec.append(row, 1));
            recs.add(Rec.append(row, -1));
          } else {
            Double d = r.nextInt(6) == 0 ? SPECIAL[r.nextInt(SPECIAL.length)] : Double.valueOf((r.nextInt(range) - range / 2) * 0.5);
            Row row = Row.of((long) r.nextInt(groups), r.nextInt(8) == 0 ? null : (long) r.nextInt(range), d);
            live.add(row);
            recs.add(Rec.append(row, 1));
          }
        }
        ticks.add(recs);
      }
      return new Sample(ticks, 1 + r.nextInt(3), grouped);
    };
  }

  @Test
  void minAndMaxMatchTheOracleTickByTick() {
    checkBothRules(150, true);
  }

  /** The general path (the typed one turned off, as the engine option does) over the same shapes. */
  @Test
  void onTheGeneralPathMinAndMaxMatchTheOracle() {
    checkBothRules(100, false);
  }

  /**
   * {@code tries} samples on the typed path or the general one, each tick against the oracle; both
   * ways of deciding an extremum (with and without reading the group) must be reached, and the
   * typed path taken exactly when it is on.
   */
  private static void checkBothRules(int tries, boolean typed) {
    long without = ReduceOp.EXTREMA_WITHOUT_READ.sum();
    long read = ReduceOp.EXTREMA_READ.sum();
    long typedTicks = TypedReduce.TYPED_TICKS.sum();
    Property.tries(tries).forAll(samples(), s -> check(s, typed));
    assertThat(ReduceOp.EXTREMA_WITHOUT_READ.sum() - without).as("extrema decided without reading the group").isPositive();
    assertThat(ReduceOp.EXTREMA_READ.sum() - read).as("extrema that read the group").isPositive();
    if (typed) {
      assertThat(TypedReduce.TYPED_TICKS.sum() - typedTicks).as("ticks that took the typed path").isPositive();
    } else {
      assertThat(TypedReduce.TYPED_TICKS.sum() - typedTicks).as("ticks that took the typed path while it was off").isZero();
    }
  }

  /**
   * A MIN of no values (NULL) and a MIN of 0 are different accumulators though both hold 0 in their
   * column: a group that goes from one to the other, its older entries not yet merged away, must
   * still find the one that is live.
   */
  @Test
  void anExtremumOfNoValuesIsNotAnExtremumOfZero() {
    Row none = Row.of(0L, null, null);
    Row zero = Row.of(0L, 0L, 0.0);
    List<List<Rec>> ticks = List.of(List.of(Rec.append(none, 1)), List.of(Rec.append(none, -1), Rec.append(zero, 1)),
        List.of(Rec.append(Row.of(0L, 5L, 1.0), 1)), List.of(Rec.append(zero, -1)));
    for (boolean typed : new boolean[] {true, false}) {
      for (boolean grouped : new boolean[] {true, false}) {
        long typedTicks = TypedReduce.TYPED_TICKS.sum();
        check(new Sample(ticks, 1, grouped), typed);
        assertThat(TypedReduce.TYPED_TICKS.sum() > typedTicks).as("typed path taken (grouped: %s)", grouped).isEqualTo(typed);
      }
    }
  }

  private static void check(Sample s, boolean typed) {
    Schema aggs = Schema.of(Column.of("n", Type.BIGINT), Column.of("lo", Type.BIGINT), Column.of("hi", Type.BIGINT),
        Column.of("dlo", Type.DOUBLE), Column.of("dhi", Type.DOUBLE));
    Schema out = s.grouped() ? Schema.of(Column.of("g", Type.BIGINT)).concat(aggs) : aggs;
    ScriptedView.assertEqualsOracleTickByTick(S, s.ticks(), s.workers(), b -> typed ? b : b.typedReduce(false),
        new Plan.Reduce(new Plan.Get("s", S), s.grouped() ? new int[] {0} : new int[0], AGGS, out), in -> oracle(in, s.grouped()));
  }

  /**
   * Per group: COUNT(*), MIN and MAX of the non-NULL values of each column (NULL when there are
   * none, doubles ordered by {@link Double#compare}); without GROUP BY one row always.
   */
  static Map<Row, Long> oracle(Map<Row, Long> input, boolean grouped) {
    Map<Long, long[]> count = new HashMap<>();
    Map<Long, Long> lo = new HashMap<>();
    Map<Long, Long> hi = new HashMap<>();
    Map<Long, Double> dlo = new HashMap<>();
    Map<Long, Double> dhi = new HashMap<>();
    input.forEach((row, n) -> {
      if (n <= 0) {
        return;
      }
      long g = grouped ? row.getLong(0) : 0L;
      count.computeIfAbsent(g, k -> new long[1])[0] += n;
      if (row.get(1) != null) {
        lo.merge(g, row.getLong(1), Math::min);
        hi.merge(g, row.getLong(1), Math::max);
      }
      if (row.get(2) != null) {
        Double d = (Double) row.get(2);
        dlo.merge(g, d, (a, b) -> Double.compare(a, b) <= 0 ? a : b);
        dhi.merge(g, d, (a, b) -> Double.compare(a, b) >= 0 ? a : b);
      }
    });
    Map<Row, Long> out = new HashMap<>();
    if (!grouped) {
      long n = count.containsKey(0L) ? count.get(0L)[0] : 0;
      out.put(Row.of(n, lo.get(0L), hi.get(0L), dlo.get(0L), dhi.get(0L)), 1L);
      return out;
    }
    count.forEach((g, n) -> out.put(Row.of(g, n[0], lo.get(g), hi.get(g), dlo.get(g), dhi.get(g)), 1L));
    return out;
  }
}
