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
 * The typed reduce path ({@link TypedReduce}) against a naive oracle, tick by tick: COUNT(*),
 * COUNT, SUM, AVG, MIN and MAX over BIGINT and DOUBLE columns with NULLs and retractions, 1–3 workers,
 * grouped by a BIGINT key (some ticks hold a NULL group key: those take the general path, so the
 * two paths alternate over one accumulator arrangement) or by a TEXT key (NULLs included, all on the
 * typed path's rows). DOUBLE inputs are multiples of 0.25, so sums are exact in any order.
 */
class TypedReducePropertyTest {
  static final Schema S = Schema.of(Column.of("k", Type.BIGINT), Column.of("x", Type.BIGINT), Column.of("y", Type.DOUBLE));
  static final Schema OUT = Schema.of(Column.of("k", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("nx", Type.BIGINT),
      Column.of("sx", Type.BIGINT), Column.of("ax", Type.DOUBLE), Column.of("sy", Type.DOUBLE), Column.of("ay", Type.DOUBLE),
      Column.of("minx", Type.BIGINT), Column.of("maxy", Type.DOUBLE));
  static final List<Aggregate> AGGS = List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.COUNT, 1, Type.BIGINT),
      new Aggregate(Aggregate.Kind.SUM, 1, Type.BIGINT), new Aggregate(Aggregate.Kind.AVG, 1, Type.BIGINT),
      new Aggregate(Aggregate.Kind.SUM, 2, Type.DOUBLE), new Aggregate(Aggregate.Kind.AVG, 2, Type.DOUBLE),
      new Aggregate(Aggregate.Kind.MIN, 1, Type.BIGINT), new Aggregate(Aggregate.Kind.MAX, 2, Type.DOUBLE));

  static final Schema TEXT_S = Schema.of(Column.of("k", Type.TEXT), Column.of("x", Type.BIGINT), Column.of("y", Type.DOUBLE));
  static final Schema TEXT_OUT = Schema.of(Column.of("k", Type.TEXT), Column.of("n", Type.BIGINT), Column.of("nx", Type.BIGINT),
      Column.of("sx", Type.BIGINT), Column.of("ax", Type.DOUBLE), Column.of("sy", Type.DOUBLE), Column.of("ay", Type.DOUBLE),
      Column.of("minx", Type.BIGINT), Column.of("maxy", Type.DOUBLE));

  record Sample(List<List<Rec>> ticks, int workers) {
    @Override
    public String toString() {
      return "workers=" + workers + " ticks=" + ticks;
    }
  }

  /** Ticks of inserts and retractions of rows inserted before; a NULL key in about a third of the samples. */
  static Gen<Sample> samples() {
    return samples(false);
  }

  /** As {@link #samples()}; with {@code text}, the key is TEXT (a few names, a NULL in about a third of the samples). */
  static Gen<Sample> samples(boolean text) {
    return (Random r, int size) -> {
      boolean nullKeys = r.nextInt(3) == 0;
      int keys = 1 + r.nextInt(8);
      List<Row> live = new ArrayList<>();
      List<List<Rec>> ticks = new ArrayList<>();
      int nTicks = 1 + r.nextInt(Math.max(1, size / 8) + 1);
      for (int t = 0; t < nTicks; t++) {
        List<Rec> recs = new ArrayList<>();
        int n = r.nextInt(Math.max(1, size / 2) + 1);
        for (int i = 0; i < n; i++) {
          if (!live.isEmpty() && r.nextInt(3) == 0) {
            recs.add(Rec.append(live.remove(r.nextInt(live.size())), -1));
          } else {
            Long kn = nullKeys && r.nextInt(10) == 0 ? null : (long) (r.nextInt(keys) - 2);
            Object k = text && kn != null ? "name " + kn : kn;
            Long x = r.nextInt(5) == 0 ? null : (long) (r.nextInt(2001) - 1000);
            Double y = r.nextInt(5) == 0 ? null : (r.nextInt(81) - 40) * 0.25;
            Row row = Row.of(k, x, y);
            live.add(row);
            recs.add(Rec.append(row, 1));
          }
        }
        ticks.add(recs);
      }
      return new Sample(ticks, 1 + r.nextInt(3));
    };
  }

  @Test
  void typedReduceMatchesTheOracleTickByTick() {
    long before = TypedReduce.TYPED_TICKS.sum();
    Property.tries(60).forAll(samples(), s -> check(s, true));
    assertThat(TypedReduce.TYPED_TICKS.sum() - before).as("ticks that took the typed path").isPositive();
  }

  /** With the typed path off (the engine option) the same shapes take the general path and match the oracle too. */
  @Test
  void withTheTypedPathOffTheGeneralPathMatchesTheOracle() {
    long before = TypedReduce.TYPED_TICKS.sum();
    Property.tries(30).forAll(samples(), s -> check(s, false));
    assertThat(TypedReduce.TYPED_TICKS.sum() - before).as("ticks that took the typed path while it was off").isZero();
  }

  @Test
  void aTextKeyTakesTheTypedPathAndMatchesTheOracle() {
    long before = TypedReduce.TYPED_TICKS.sum();
    Property.tries(60).forAll(samples(true), s -> check(s, true, TEXT_S, TEXT_OUT));
    assertThat(TypedReduce.TYPED_TICKS.sum() - before).as("ticks that took the typed path").isPositive();
    Property.tries(20).forAll(samples(true), s -> check(s, false, TEXT_S, TEXT_OUT));
  }

  /** Runs {@code s} on an engine with the default options, or with the typed path turned off. */
  private static void check(Sample s, boolean typed) {
    check(s, typed, S, OUT);
  }

  private static void check(Sample s, boolean typed, Schema in, Schema outSchema) {
    ScriptedView.assertEqualsOracleTickByTick(in, s.ticks(), s.workers(), b -> typed ? b : b.typedReduce(false),
        new Plan.Reduce(new Plan.Get("s", in), new int[] {0}, AGGS, outSchema), TypedReducePropertyTest::oracle);
  }

  /** The aggregate computed from scratch over the input multiset. */
  static Map<Row, Long> oracle(Map<Row, Long> input) {
    Map<Object, long[]> longs = new HashMap<>(); // n, nx, sx
    Map<Object, double[]> doubles = new HashMap<>(); // sy, ny
    Map<Object, Long> minX = new HashMap<>();
    Map<Object, Double> maxY = new HashMap<>();
    for (Map.Entry<Row, Long> en : input.entrySet()) {
      Row row = en.getKey();
      long m = en.getValue();
      Object k = row.get(0);
      long[] l = longs.computeIfAbsent(k, x -> new long[3]);
      double[] d = doubles.computeIfAbsent(k, x -> new double[2]);
      l[0] += m;
      if (m > 0 && row.get(1) != null) {
        minX.merge(k, (Long) row.get(1), Math::min);
      }
      if (m > 0 && row.get(2) != null) {
        maxY.merge(k, (Double) row.get(2), (a, b) -> Double.compare(a, b) >= 0 ? a : b);
      }
      if (row.get(1) != null) {
        l[1] += m;
        l[2] += m * (Long) row.get(1);
      }
      if (row.get(2) != null) {
        d[0] += m * (Double) row.get(2);
        d[1] += m;
      }
    }
    Map<Row, Long> out = new HashMap<>();
    longs.forEach((k, l) -> {
      if (l[0] == 0) {
        return;
      }
      double[] d = doubles.get(k);
      out.put(Row.of(k, l[0], l[1], l[1] > 0 ? l[2] : null, l[1] > 0 ? (double) l[2] / l[1] : null,
          d[1] > 0 ? d[0] : null, d[1] > 0 ? d[0] / d[1] : null, minX.get(k), maxY.get(k)), 1L);
    });
    return out;
  }
}
