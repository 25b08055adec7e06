package io.cairn.benchmarks.engine;

import io.cairn.engine.plan.Aggregate;
import io.cairn.engine.plan.Plan;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Column;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.source.Envelope;
import io.cairn.engine.source.SourceDefinition;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Full replay versus catch-up after a restore, per record, in the engine alone (no broker, no
 * store): a load-generator upsert source of {@code keys} ids and a per-customer COUNT/SUM view
 * (10,000 customers). Each round (1) replays {@code total} records into an empty engine, (2) runs
 * a second engine to {@code total - day} records and captures its state, (3) restores that state
 * into a third engine and catches up the last {@code day} records. The capture happens at a tick
 * boundary (ticks read 100,000 records), so {@code total - day} should be a multiple of 100,000.
 * With a fourth argument only step 3 is repeated (15 rounds), for profiling.
 *
 * <p>Run: {@code mvn -B -ntp -q -pl benchmarks -am package -DskipTests && java -Xmx3g -cp
 * "benchmarks/target/cairn-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*"
 * io.cairn.benchmarks.engine.CatchUpRatio 1033000 33000 100000}
 */
public final class CatchUpRatio {
  static final Schema GEN = LoadGeneratorConnector.SCHEMA;

  static Plan byCustomer() {
    return new Plan.Reduce(new Plan.Get("gen", GEN), new int[] {1},
        List.of(Aggregate.countStar(), new Aggregate(Aggregate.Kind.SUM, 2, Type.BIGINT)),
        Schema.of(Column.of("c", Type.BIGINT), Column.of("n", Type.BIGINT), Column.of("total", Type.BIGINT)));
  }

  static long off(Engine e) {
    return e.offsets().getOrDefault("gen", io.cairn.engine.source.SourceOffsets.EMPTY).getLong("offset", 0);
  }

  public static void main(String[] args) {
    long total = Long.parseLong(args.length > 0 ? args[0] : "1033000");
    long day = Long.parseLong(args.length > 1 ? args[1] : "33000");
    String keys = args.length > 2 ? args[2] : "100000";
    Map<String, String> opts = Map.of("keys", keys, "categories", "10000", "limit", Long.toString(total), "seed", "7");
    TickPolicy p = new TickPolicy(100_000, Duration.ofMillis(200));
    boolean catchOnly = args.length > 3;
    double lastReplayRate = 0;
    EngineState state = null;
    for (int round = 0; round < (catchOnly ? 15 : 3); round++) {
      long t0 = System.nanoTime();
      if (!catchOnly || round == 0) try (Engine e = Engine.builder().workers(1).tickPolicy(p).build()) {
        e.createSource(1, new SourceDefinition("gen", "load-generator", opts, null, null, Envelope.UPSERT));
        e.createView(2, "v", byCustomer());
        long ticks = 0;
        while (off(e) < total) {
          e.tick();
          ticks++;
        }
        long full = System.nanoTime() - t0;
        System.out.printf("full replay: %d records in %d ms (%.0f rec/s), %d ticks%n", total, full / 1_000_000, total / (full / 1e9), ticks);
        lastReplayRate = total / (full / 1e9);
      }
      // engine stopped at total - day, captured, restored, caught up
      Map<String, String> opts2 = new java.util.HashMap<>(opts);
      if (!catchOnly || round == 0) try (Engine e = Engine.builder().workers(1).tickPolicy(new TickPolicy(100_000, Duration.ofMillis(200))).build()) {
        e.createSource(1, new SourceDefinition("gen", "load-generator", opts2, null, null, Envelope.UPSERT));
        e.createView(2, "v", byCustomer());
        // ingest exactly total - day using rate of maxRecords: tick until offset >= total-day
        e.setReadRateLimit("gen", 0);
        while (off(e) < total - day) {
          e.tick();
        }
        state = e.capture();
        System.out.printf("captured at offset %d: %d rows%n", off(e), state.rows());
      }
      try (Engine e = Engine.builder().workers(1).tickPolicy(p).build()) {
        e.createSource(1, new SourceDefinition("gen", "load-generator", opts, null, null, Envelope.UPSERT));
        e.createView(2, "v", byCustomer());
        long r0 = System.nanoTime();
        e.restore(state);
        long restoreNs = System.nanoTime() - r0;
        long from = off(e);
        long c0 = System.nanoTime();
        long ticks = 0;
        while (off(e) < total) {
          e.tick();
          ticks++;
        }
        long cu = System.nanoTime() - c0;
        long n = total - from;
        System.out.printf("restore %d ms; catch-up: %d records in %d ms (%.0f rec/s), %d ticks%n", restoreNs / 1_000_000, n, cu / 1_000_000, n / (cu / 1e9), ticks);
        if (lastReplayRate > 0) {
          System.out.printf("catch-up rate / full-replay rate, per record: %.2f%n", n / (cu / 1e9) / lastReplayRate);
        }
      }
    }
  }
}
