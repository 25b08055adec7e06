package io.cairn.engine.sql;

import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Shared set-up: an engine with small ticks, a session over an in-memory catalog, and the load generator's oracle. */
final class SqlFixture {
  static final TickPolicy POLICY = new TickPolicy(1000, Duration.ofMillis(20));
  static final Clock CLOCK = Clock.fixed(Instant.parse("2026-12-01T00:00:00Z"), ZoneOffset.UTC);
  static final String GEN = "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 200, limit = 5000, seed = 7) ENVELOPE UPSERT";

  private SqlFixture() {}

  static Engine engine(int workers) {
    return Engine.builder().workers(workers).tickPolicy(POLICY).clock(CLOCK).build();
  }

  static SqlSession session(Engine e, CatalogLog log) {
    return new SqlSession(e, log, CLOCK);
  }

  static SqlSession session(Engine e) {
    return session(e, new InMemoryCatalogLog());
  }

  /**
   * The check every view operator's test makes: runs {@code statements} (sources, then views) on an
   * engine of one worker and on one of two, captures the state after two ticks (half-way through the
   * sources), and asserts that each view named in {@code expected} equals its rows (sorted) once
   * caught up. Then it restores the two-worker capture into a fresh engine whose catalog is replayed
   * to the captured position, asserts no view was recomputed (their state is in the snapshot), and
   * that every view ends equal to {@code expected} again.
   */
  static void assertViewsEqualOracleAcrossARestore(List<String> statements, Map<String, List<Row>> expected) {
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    io.cairn.engine.runtime.EngineState state = null;
    long position = 0;
    for (int workers = 1; workers <= 2; workers++) {
      try (Engine a = engine(workers)) {
        SqlSession s = session(a, workers == 1 ? new InMemoryCatalogLog() : log);
        statements.forEach(s::execute);
        a.tick();
        a.tick();
        state = a.capture();
        position = s.position();
        a.tickUntilCaughtUp(1000);
        for (var e : expected.entrySet()) {
          org.assertj.core.api.Assertions.assertThat(a.peek(e.getKey())).as("view %s, %d workers", e.getKey(), workers)
              .isEqualTo(e.getValue());
        }
      }
    }
    try (Engine b = engine(2)) {
      SqlSession s = session(b, log);
      s.replay(position);
      Engine.Restored restored = b.restore(state);
      org.assertj.core.api.Assertions.assertThat(restored.recomputedViews()).as("every view's state is in the snapshot").isEmpty();
      b.tickUntilCaughtUp(1000);
      for (var e : expected.entrySet()) {
        org.assertj.core.api.Assertions.assertThat(b.peek(e.getKey())).as("view %s after a restore", e.getKey()).isEqualTo(e.getValue());
      }
    }
  }

  /** The generator's table (id → row) after {@code upTo} records with keys=200, seed=7. */
  static Map<Long, Row> table(long upTo) {
    return table(200, upTo);
  }

  /** The generator's table (id → row) after {@code upTo} records with {@code keys}, seed=7 (10 categories). */
  static Map<Long, Row> table(long keys, long upTo) {
    var s = new LoadGeneratorConnector.Settings(keys, 10, 7, 10, upTo, 0);
    Map<Long, Row> t = new HashMap<>();
    for (long i = 0; i < upTo; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        t.remove(r.id());
      } else {
        t.put(r.id(), r.row());
      }
    }
    return new TreeMap<>(t);
  }
}
