package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.InMemoryCatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.EngineState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Replaying the catalog into a fresh engine recreates every dataflow with the same id and the same results. */
class CatalogReplayTest {
  static final List<String> SCRIPT = List.of(
      SqlFixture.GEN,
      "CREATE SOURCE gen2 FROM LOAD GENERATOR (keys = 50, limit = 3000, seed = 11)",
      "CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category",
      "CREATE MATERIALIZED VIEW doomed AS SELECT category FROM by_cat WHERE n > 1",
      "CREATE MATERIALIZED VIEW doomed2 AS SELECT DISTINCT category FROM doomed",
      "DROP VIEW by_cat CASCADE",
      "CREATE MATERIALIZED VIEW by_cat AS SELECT category, MAX(amount) AS hi FROM gen GROUP BY category",
      "CREATE MATERIALIZED VIEW joined AS SELECT g.id, g.amount, h.amount AS other FROM gen g JOIN gen2 h ON g.id = h.id WHERE g.amount > h.amount",
      "CREATE MATERIALIZED VIEW appended AS SELECT category, COUNT(*) AS n FROM gen2 GROUP BY category",
      "DROP VIEW appended");

  static Map<String, Long> ids(Engine e) {
    Map<String, Long> out = new LinkedHashMap<>();
    for (Dataflow d : e.dataflows()) {
      out.put(d.name(), d.id());
    }
    return out;
  }

  static Map<String, List<Row>> contents(Engine e) {
    Map<String, List<Row>> out = new LinkedHashMap<>();
    for (Dataflow d : e.dataflows()) {
      out.put(d.name(), e.peek(d.name()));
    }
    return out;
  }

  @Test
  void replayRecreatesSameIdsAndResults() {
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    Map<String, Long> ids;
    Map<String, List<Row>> results;
    try (Engine a = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(a, log);
      for (String sql : SCRIPT) {
        s.execute(sql);
        a.tick();
      }
      a.tickUntilCaughtUp(1000);
      ids = ids(a);
      results = contents(a);
    }
    assertThat(ids).containsExactly(Map.entry("gen", 0L), Map.entry("gen2", 1L), Map.entry("by_cat", 6L), Map.entry("joined", 7L));
    assertThat(results.get("joined")).isNotEmpty();
    assertThat(log.read(0)).extracting(CatalogEntry::sql).containsExactlyElementsOf(SCRIPT);
    assertThat(log.read(0)).allSatisfy(en -> assertThat(en.schemaVersion()).isEqualTo(CatalogEntry.SCHEMA_VERSION));
    assertThat(log.read(0)).allSatisfy(en -> assertThat(en.wallClock()).isEqualTo(Instant.parse("2026-12-01T00:00:00Z")));

    try (Engine b = SqlFixture.engine(3)) {
      SqlSession s = SqlFixture.session(b, log);
      assertThat(s.replayAll()).isEqualTo(SCRIPT.size());
      assertThat(ids(b)).isEqualTo(ids);
      b.tickUntilCaughtUp(1000);
      assertThat(contents(b)).isEqualTo(results);
    }
  }

  /** How a node recovers: replay up to the snapshot's catalog position, restore, replay the rest. */
  @Test
  void replayAroundARestoredSnapshot() {
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    EngineState state;
    long snapshotPosition;
    Map<String, List<Row>> results;
    try (Engine a = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(a, log);
      for (String sql : SCRIPT.subList(0, 5)) {
        s.execute(sql);
      }
      a.tick();
      a.tick();
      state = a.capture();
      snapshotPosition = s.position();
      for (String sql : SCRIPT.subList(5, SCRIPT.size())) {
        s.execute(sql);
        a.tick();
      }
      a.tickUntilCaughtUp(1000);
      results = contents(a);
    }
    try (Engine b = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(b, log);
      assertThat(s.replay(snapshotPosition)).isEqualTo(5);
      assertThat(ids(b)).containsOnlyKeys("gen", "gen2", "by_cat", "doomed", "doomed2");
      b.restore(state);
      assertThat(s.replayAll()).isEqualTo(SCRIPT.size());
      b.tickUntilCaughtUp(1000);
      assertThat(contents(b)).isEqualTo(results);
    }
  }

  /** Two nodes with their own engines race DDL into one catalog: one order, the same dataflows on both. */
  @Test
  void twoSessionsRacingShareOneOrder() throws Exception {
    InMemoryCatalogLog log = new InMemoryCatalogLog();
    try (Engine a = SqlFixture.engine(1); Engine b = SqlFixture.engine(1)) {
      SqlSession sa = SqlFixture.session(a, log);
      SqlSession sb = SqlFixture.session(b, log);
      sa.execute(SqlFixture.GEN);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      CountDownLatch go = new CountDownLatch(1);
      try {
        List<Future<?>> fs = new ArrayList<>();
        for (SqlSession s : List.of(sa, sb)) {
          String tag = s == sa ? "a" : "b";
          fs.add(pool.submit(() -> {
            go.await();
            for (int i = 0; i < 21; i++) {
              s.execute("CREATE MATERIALIZED VIEW " + tag + i + " AS SELECT id FROM gen WHERE amount > " + i);
              if (i % 3 == 2) {
                s.execute("DROP VIEW " + tag + (i - 1));
              }
            }
            return null;
          }));
        }
        go.countDown();
        for (Future<?> f : fs) {
          f.get();
        }
      } finally {
        pool.shutdownNow();
      }
      sa.replayAll();
      sb.replayAll();
      assertThat(sa.position()).isEqualTo(sb.position()).isEqualTo(log.end()).isEqualTo(1 + 2 * (21 + 7));
      assertThat(ids(a)).isEqualTo(ids(b)).hasSize(1 + 2 * (21 - 7));
      a.tickUntilCaughtUp(100);
      b.tickUntilCaughtUp(100);
      assertThat(contents(a)).isEqualTo(contents(b));
    }
  }
}
