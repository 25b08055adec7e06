package io.cairn.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EngineSmokeTest {
  static final Schema GEN = LoadGeneratorConnector.SCHEMA;
  static final Map<String, String> OPTS = Map.of("keys", "500", "limit", "20000", "seed", "7");

  static Plan countByCategory() {
    Plan get = new Plan.Get("gen", GEN);
    return new Plan.Reduce(
        get,
        new int[] {1},
        List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.SUM, 2, Type.BIGINT),
            new Aggregate(Aggregate.Kind.MIN, 2, Type.BIGINT), new Aggregate(Aggregate.Kind.MAX, 2, Type.BIGINT)),
        Schema.of(Column.of("category", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("total", Type.BIGINT),
            Column.of("lo", Type.BIGINT), Column.of("hi", Type.BIGINT)));
  }

  static List<Row> oracle(long upTo) {
    var s = new LoadGeneratorConnector.Settings(500, 10, 7, 10, 20000, 0);
    Map<Long, Row> table = new HashMap<>();
    for (long i = 0; i < upTo; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        table.remove(r.id());
      } else {
        table.put(r.id(), r.row());
      }
    }
    Map<Long, List<Long>> groups = new TreeMap<>();
    for (Row r : table.values()) {
      groups.computeIfAbsent(r.getLong(1), k -> new ArrayList<>()).add(r.getLong(2));
    }
    List<Row> out = new ArrayList<>();
    groups.forEach((c, v) -> out.add(Row.of(c, (long) v.size(), v.stream().mapToLong(x -> x).sum(),
        v.stream().mapToLong(x -> x).min().getAsLong(), v.stream().mapToLong(x -> x).max().getAsLong())));
    return out;
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3})
  void countByCategoryMatchesOracleAndSurvivesRestore(int workers) {
    TickPolicy p = new TickPolicy(1000, Duration.ofMillis(50));
    EngineState state;
    try (Engine e = Engine.builder().workers(workers).tickPolicy(p).build()) {
      e.createSource(1, new SourceDefinition("gen", "load-generator", OPTS, null, null, Envelope.UPSERT));
      e.createView(2, "by_cat", countByCategory());
      for (int i = 0; i < 7; i++) {
        e.tick();
      }
      assertThat(e.offsets().get("gen").get("offset")).isEqualTo("7000");
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(oracle(7000));
      state = e.capture();
      // a late view hydrates from the source's arrangement
      e.createView(3, "big", new Plan.Filter(new Plan.Get("gen", GEN),
          new Expr.Cmp(Expr.CmpOp.GT, Expr.col(2, Type.BIGINT), Expr.lit(500L))));
      e.tickUntilCaughtUp(1000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(oracle(20000));
    }
    try (Engine e = Engine.builder().workers(4 - workers).tickPolicy(p).build()) {
      e.createSource(1, new SourceDefinition("gen", "load-generator", OPTS, null, null, Envelope.UPSERT));
      e.createView(2, "by_cat", countByCategory());
      e.restore(state);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(oracle(7000));
      e.tickUntilCaughtUp(1000);
      assertThat(e.peek("by_cat")).containsExactlyElementsOf(oracle(20000));
      assertThat(e.lookup("by_cat", Row.of(3L))).hasSize(1);
    }
  }
}
