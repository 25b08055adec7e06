package io.cairn.snapshotter;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.ArrangementState;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import io.cairn.engine.trace.Batch;
import io.cairn.engine.trace.Update;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** An engine over the load generator with a grouped view, and state comparison helpers. */
final class Fixtures {
  static final Schema GEN = LoadGeneratorConnector.SCHEMA;

  private Fixtures() {}

  static Plan countByCategory() {
    Plan get = new Plan.Get("gen", GEN);
    return new Plan.Reduce(
        get,
        new int[] {1},
        List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.SUM, 2, Type.BIGINT)),
        Schema.of(Column.of("category", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("total", Type.BIGINT)));
  }

  /** An engine with source "gen" (keys, limit) and view "by_cat"; not yet ticked. */
  static Engine engine(int workers, long keys, long limit, int recordsPerTick) {
    Engine e = Engine.builder().workers(workers).tickPolicy(new TickPolicy(recordsPerTick, Duration.ofMillis(50))).build();
    define(e, keys, limit);
    return e;
  }

  static void define(Engine e, long keys, long limit) {
    e.createSource(1, new SourceDefinition("gen", "load-generator",
        Map.of("keys", Long.toString(keys), "limit", Long.toString(limit), "seed", "7"), null, null, Envelope.UPSERT));
    e.createView(2, "by_cat", countByCategory());
  }

  /** The updates of an arrangement shard, as of its batches, sorted and consolidated per (key, val, time). */
  static List<Update> updates(ArrangementState a) {
    List<Update> out = new ArrayList<>();
    for (Batch b : a.batches()) {
      for (int i = 0; i < b.size(); i++) {
        out.add(b.update(i));
      }
    }
    out.sort(Update.ORDER);
    return out;
  }

  /** The collection of an arrangement shard as of its last time: (key, val) → sum of diffs, zeros dropped. */
  static java.util.TreeMap<String, Long> collection(ArrangementState a) {
    java.util.TreeMap<String, Long> out = new java.util.TreeMap<>();
    for (Batch b : a.batches()) {
      for (int i = 0; i < b.size(); i++) {
        out.merge(b.key(i) + "|" + b.val(i), b.diff(i), Long::sum);
      }
    }
    out.values().removeIf(v -> v == 0);
    return out;
  }

  /** Asserts two states hold the same collections in every arrangement shard as of their tick (batches may differ). */
  static void assertSameCollections(EngineState actual, EngineState expected) {
    assertThat(actual.tick()).isEqualTo(expected.tick());
    assertThat(actual.offsets()).isEqualTo(expected.offsets());
    assertThat(actual.arrangements()).hasSameSizeAs(expected.arrangements());
    Comparator<ArrangementState> order = Comparator.comparing(ArrangementState::arrangement).thenComparingInt(ArrangementState::shard);
    List<ArrangementState> a = new ArrayList<>(actual.arrangements());
    List<ArrangementState> b = new ArrayList<>(expected.arrangements());
    a.sort(order);
    b.sort(order);
    for (int i = 0; i < a.size(); i++) {
      assertThat(a.get(i).arrangement()).isEqualTo(b.get(i).arrangement());
      assertThat(a.get(i).upper()).isEqualTo(b.get(i).upper());
      assertThat(collection(a.get(i))).as("collection of " + a.get(i).arrangement() + "/" + a.get(i).shard()).isEqualTo(collection(b.get(i)));
    }
  }

  /** Asserts two states hold the same arrangements, batch by batch (ids, descriptions, contents). */
  static void assertSameState(EngineState actual, EngineState expected) {
    assertThat(actual.tick()).isEqualTo(expected.tick());
    assertThat(actual.shards()).isEqualTo(expected.shards());
    assertThat(actual.offsets()).isEqualTo(expected.offsets());
    assertThat(actual.arrangements()).hasSameSizeAs(expected.arrangements());
    Comparator<ArrangementState> order = Comparator.comparing(ArrangementState::arrangement).thenComparingInt(ArrangementState::shard);
    List<ArrangementState> a = new ArrayList<>(actual.arrangements());
    List<ArrangementState> b = new ArrayList<>(expected.arrangements());
    a.sort(order);
    b.sort(order);
    for (int i = 0; i < a.size(); i++) {
      ArrangementState x = a.get(i);
      ArrangementState y = b.get(i);
      assertThat(x.arrangement()).isEqualTo(y.arrangement());
      assertThat(x.shard()).isEqualTo(y.shard());
      assertThat(x.keySchema()).isEqualTo(y.keySchema());
      assertThat(x.valSchema()).isEqualTo(y.valSchema());
      assertThat(x.upper()).isEqualTo(y.upper());
      assertThat(x.batches().stream().map(Batch::id).toList()).as(x.arrangement() + "/" + x.shard())
          .isEqualTo(y.batches().stream().map(Batch::id).toList());
      assertThat(x.batches().stream().map(Batch::description).toList()).isEqualTo(y.batches().stream().map(Batch::description).toList());
      assertThat(updates(x)).as("updates of " + x.arrangement() + "/" + x.shard()).isEqualTo(updates(y));
    }
  }
}
