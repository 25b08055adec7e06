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

  /** The generator's table (id → row) after {@code upTo} records with keys=200, seed=7. */
  static Map<Long, Row> table(long upTo) {
    var s = new LoadGeneratorConnector.Settings(200, 10, 7, 10, 5000, 0);
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
