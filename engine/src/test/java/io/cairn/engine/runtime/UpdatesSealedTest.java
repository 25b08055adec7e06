package io.cairn.engine.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.source.SourceOffsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link Engine#updatesSealed()} counts the updates each dataflow's operators sealed in this
 * engine, after each tick's consolidation: an upsert source seals at most a retraction and an
 * insert per key a tick touched, a snapshot's load adds nothing,
 * and a catch-up after a restore counts only its own work.
 */
class UpdatesSealedTest {
  private static final TickPolicy POLICY = new TickPolicy(1_000, Duration.ofMillis(200));

  private static Plan byCategory() {
    return new Plan.Reduce(new Plan.Get("gen", LoadGeneratorConnector.SCHEMA), new int[] {1},
        List.of(Aggregate.countStar()), Schema.of(Column.of("c", Type.BIGINT), Column.of("n", Type.BIGINT)));
  }

  private static Engine engine(long limit) {
    Engine e = Engine.builder().workers(2).tickPolicy(POLICY).build();
    e.createSource(1, new SourceDefinition("gen", "load-generator",
        Map.of("keys", "100", "categories", "10", "limit", Long.toString(limit), "seed", "3"), null, null, Envelope.UPSERT));
    e.createView(2, "v", byCategory());
    return e;
  }

  private static long offset(Engine e) {
    return e.offsets().getOrDefault("gen", SourceOffsets.EMPTY).getLong("offset", 0);
  }

  @Test
  void countsTheWorkOfThisEngineOnlyNotASnapshotsLoad() {
    EngineState state;
    try (Engine e = engine(3_000)) {
      while (offset(e) < 3_000) {
        e.tick();
      }
      Map<String, Long> sealed = e.updatesSealed();
      assertThat(sealed).containsOnlyKeys("gen", "v");
      // sealed after a tick's consolidation: 1,000-record ticks over 100 keys seal at most a retraction and an insert per key
      assertThat(sealed.get("gen")).isBetween(100L, 3L * 200);
      assertThat(sealed.get("v")).isPositive();
      state = e.capture();
    }
    try (Engine e = engine(4_000)) {
      e.restore(state);
      assertThat(e.updatesSealed()).as("a load seals nothing").containsEntry("gen", 0L).containsEntry("v", 0L);
      while (offset(e) < 4_000) {
        e.tick();
      }
      assertThat(e.updatesSealed().get("gen")).as("the catch-up's 1,000 upserts").isBetween(100L, 200L);
    }
  }
}
