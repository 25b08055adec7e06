package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.dataflow.Arrangement;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.expr.Expr;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.testkit.ScriptedConnector;
import io.cairn.engine.testkit.ScriptedConnector.Rec;
import io.cairn.engine.testkit.ScriptedConnector.Script;
import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Failure domains and drop: a failing view leaves the others running; dropped views release their arrangements. */
class DataflowLifecycleTest {
  static final Schema S = Schema.of(Column.of("k", Type.BIGINT), Column.of("v", Type.BIGINT));
  static final Plan GET = new Plan.Get("s", S);
  static final TickPolicy POLICY = new TickPolicy(1_000_000, Duration.ZERO);

  static Plan countByK() {
    return new Plan.Reduce(
        GET, new int[] {0}, List.of(Aggregate.countStar()), Schema.of(Column.of("k", Type.BIGINT), Column.of("n", Type.BIGINT)));
  }

  static ScriptedConnector connector(List<List<Rec>> ticks) {
    return new ScriptedConnector().script("s", new Script(S, List.of(), ticks));
  }

  @Test
  void aViewThatDividesByZeroFailsAloneWhileAnotherViewOfTheSameSourceKeepsUpdating() {
    List<List<Rec>> ticks =
        List.of(
            List.of(Rec.append(Row.of(1L, 10L), 1), Rec.append(Row.of(2L, 20L), 1)),
            List.of(Rec.append(Row.of(0L, 5L), 1)), // 5 / 0
            List.of(Rec.append(Row.of(1L, 30L), 1)),
            List.of(Rec.append(Row.of(3L, 30L), 1), Rec.append(Row.of(2L, 20L), -1)));
    ScriptedConnector c = connector(ticks);
    for (int workers : new int[] {1, 2}) {
      try (Engine e = Engine.builder().workers(workers).tickPolicy(POLICY).connector(c).build()) {
        c.release(0);
        e.createSource(1, ScriptedConnector.definition("s"));
        e.createView(
            2,
            "ratio",
            new Plan.Map(
                GET,
                List.of(Expr.col(0, Type.BIGINT), new Expr.Arith(Expr.ArithOp.DIV, Expr.col(1, Type.BIGINT), Expr.col(0, Type.BIGINT))),
                Schema.of(Column.of("k", Type.BIGINT), Column.of("r", Type.BIGINT))));
        e.createView(3, "ratio_count", new Plan.Reduce(new Plan.Get("ratio", Schema.of(Column.of("k", Type.BIGINT), Column.of("r", Type.BIGINT))),
            new int[0], List.of(Aggregate.countStar()), Schema.of(Column.of("n", Type.BIGINT))));
        e.createView(4, "counts", countByK());

        c.release(1);
        e.tick();
        assertThat(e.peek("ratio")).containsExactly(Row.of(1L, 10L), Row.of(2L, 10L));
        assertThat(e.dataflow("ratio").orElseThrow().state()).isEqualTo(Dataflow.State.RUNNING);

        c.release(2);
        e.tick();
        Dataflow ratio = e.dataflow("ratio").orElseThrow();
        assertThat(ratio.state()).isEqualTo(Dataflow.State.FAILED);
        assertThat(ratio.error()).contains("division by zero");
        Dataflow reader = e.dataflow("ratio_count").orElseThrow();
        assertThat(reader.state()).isEqualTo(Dataflow.State.FAILED);
        assertThat(reader.error()).contains("ratio");
        assertThat(e.peek("counts")).containsExactly(Row.of(0L, 1L), Row.of(1L, 1L), Row.of(2L, 1L));

        for (int t = 3; t <= 4; t++) {
          c.release(t);
          e.tick();
        }
        assertThat(e.dataflow("counts").orElseThrow().state()).isEqualTo(Dataflow.State.RUNNING);
        assertThat(e.peek("counts")).containsExactly(Row.of(0L, 1L), Row.of(1L, 2L), Row.of(3L, 1L));
        assertThat(e.peek("s")).hasSize(4);
        // the failed view keeps what it had before the failing tick and is left out of snapshots
        assertThat(e.peek("ratio")).containsExactly(Row.of(1L, 10L), Row.of(2L, 10L));
        assertThat(e.capture().arrangements()).noneMatch(a -> a.arrangement().startsWith(Dataflow.prefix(2)));
        // a failed view can be dropped like any other
        e.drop("ratio_count");
        e.drop("ratio");
        assertThat(e.dataflow("ratio")).isEmpty();
      }
    }
  }

  @Test
  void droppingHundredViewsReturnsTheArrangementCountToItsBaselineAndReleasesTheirMemory() {
    List<List<Rec>> ticks = new ArrayList<>();
    for (int t = 0; t < 6; t++) {
      List<Rec> recs = new ArrayList<>();
      for (long i = 0; i < 50; i++) {
        recs.add(Rec.append(Row.of(i % 7, t * 100 + i), 1));
      }
      ticks.add(recs);
    }
    ScriptedConnector c = connector(ticks);
    try (Engine e = Engine.builder().workers(2).tickPolicy(POLICY).connector(c).build()) {
      e.createSource(1, ScriptedConnector.definition("s"));
      e.createView(2, "keep", countByK());
      c.release(1);
      e.tick();
      int baseline = e.arrangementCount();
      List<Row> keep = e.peek("keep");

      List<WeakReference<Arrangement>> released = new ArrayList<>();
      for (int round = 0; round < 100; round++) {
        String name = "v" + round;
        Plan plan =
            switch (round % 4) {
              case 0 -> countByK();
              case 1 -> new Plan.Distinct(GET);
              case 2 -> Plan.Join.of(GET, new Plan.Get("keep", countByK().schema()), new int[] {0}, new int[] {0});
              default -> new Plan.Filter(GET, new Expr.Cmp(Expr.CmpOp.GT, Expr.col(1, Type.BIGINT), Expr.lit(3L)));
            };
        e.createView(100 + round, name, plan);
        if (round % 10 == 0) {
          c.release(2 + round / 20);
          e.tick();
          assertThat(e.peek(name)).isNotEmpty();
        }
        for (Arrangement a : e.dataflow(name).orElseThrow().arrangements()) {
          released.add(new WeakReference<>(a));
        }
      }
      e.tick();
      assertThat(e.arrangementCount()).isGreaterThan(baseline + 100);

      // refused while a reader exists
      assertThatThrownBy(() -> e.drop("keep"))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("Cannot drop 'keep'")
          .hasMessageContaining("v2");
      assertThatThrownBy(() -> e.drop("s")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keep");
      assertThatThrownBy(() -> e.drop("nope")).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no such");

      for (int round = 0; round < 100; round++) {
        e.drop("v" + round);
      }
      assertThat(e.arrangementCount()).isEqualTo(baseline);
      assertThat(e.readersOf("keep")).isEmpty();
      c.release(ticks.size());
      e.tick();
      assertThat(e.peek("keep")).isNotEqualTo(keep).hasSize(7);

      // dropped arrangements are garbage: nothing in the engine still references them
      long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (released.stream().anyMatch(r -> r.get() != null) && System.nanoTime() < deadline) {
        System.gc();
        Thread.onSpinWait();
      }
      assertThat(released).allMatch(r -> r.get() == null, "released after drop");

      e.drop("keep");
      assertThat(e.arrangementCount()).isEqualTo(1); // the source's own
    }
  }
}
