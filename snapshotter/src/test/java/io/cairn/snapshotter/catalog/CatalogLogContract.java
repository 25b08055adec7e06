package io.cairn.snapshotter.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.catalog.CatalogConflictException;
import io.cairn.engine.catalog.CatalogEntry;
import io.cairn.engine.catalog.CatalogLog;
import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.sql.SqlSession;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The {@link CatalogLog} contract, run against every implementation. {@link #logs(int)} returns
 * that many independent handles (separate store clients where the backend has them) on one fresh,
 * empty catalog.
 */
abstract class CatalogLogContract {
  static final Instant T0 = Instant.parse("2026-12-01T10:15:30.123456Z");

  /** {@code n} handles on one new, empty catalog. */
  abstract List<CatalogLog> logs(int n);

  /** Appends made by each writer in the race test. */
  int racingAppends() {
    return 50;
  }

  /** Views each session creates in the session test. */
  int sessionViews() {
    return 8;
  }

  @Test
  void appendsAndReadsInOrder() {
    CatalogLog log = logs(1).get(0);
    assertThat(log.read(0)).isEmpty();
    assertThat(log.end()).isZero();
    String tricky = "CREATE MATERIALIZED VIEW \"ü\" AS SELECT 'it''s' AS s,\n  \"x\" FROM t -- comment\t";
    log.append(CatalogEntry.of(0, "CREATE SOURCE a FROM LOAD GENERATOR", T0));
    log.append(CatalogEntry.of(1, tricky, T0.plusSeconds(1)));
    log.append(new CatalogEntry(2, "DROP VIEW x", 1, T0.plusSeconds(2)));
    assertThat(log.read(0)).containsExactly(
        CatalogEntry.of(0, "CREATE SOURCE a FROM LOAD GENERATOR", T0),
        CatalogEntry.of(1, tricky, T0.plusSeconds(1)),
        new CatalogEntry(2, "DROP VIEW x", 1, T0.plusSeconds(2)));
    assertThat(log.read(2)).extracting(CatalogEntry::sql).containsExactly("DROP VIEW x");
    assertThat(log.read(3)).isEmpty();
    assertThat(log.end()).isEqualTo(3);
  }

  @Test
  void takenPositionIsAConflictAndTheEntryIsUnchanged() {
    List<CatalogLog> two = logs(2);
    two.get(0).append(CatalogEntry.of(0, "CREATE SOURCE a FROM LOAD GENERATOR", T0));
    assertThatThrownBy(() -> two.get(1).append(CatalogEntry.of(0, "CREATE SOURCE b FROM LOAD GENERATOR", T0)))
        .isInstanceOf(CatalogConflictException.class)
        .hasMessageContaining("Cannot append catalog entry 0")
        .satisfies(e -> assertThat(((CatalogConflictException) e).position()).isZero());
    assertThat(two.get(1).read(0)).extracting(CatalogEntry::sql).containsExactly("CREATE SOURCE a FROM LOAD GENERATOR");
  }

  @Test
  void gapsAreRefused() {
    CatalogLog log = logs(1).get(0);
    log.append(CatalogEntry.of(0, "CREATE SOURCE a FROM LOAD GENERATOR", T0));
    assertThatThrownBy(() -> log.append(CatalogEntry.of(2, "DROP SOURCE a", T0)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("Cannot append catalog entry 2");
    assertThat(log.end()).isEqualTo(1);
  }

  /**
   * Two writers append concurrently, each re-reading and retrying at the next position when it
   * loses: one total order, every entry exactly once, each writer's entries in its own order, and
   * both handles read the same sequence.
   */
  @Test
  void racingWritersProduceOneTotalOrder() throws Exception {
    List<CatalogLog> handles = logs(2);
    int n = racingAppends();
    CyclicBarrier start = new CyclicBarrier(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    int[] conflicts = new int[2];
    try {
      List<Future<?>> fs = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        int writer = w;
        CatalogLog log = handles.get(w);
        fs.add(pool.submit(() -> {
          start.await();
          long next = 0;
          for (int i = 0; i < n; i++) {
            while (true) {
              try {
                log.append(CatalogEntry.of(next, "-- writer " + writer + " entry " + i, T0));
                next++;
                break;
              } catch (CatalogConflictException lost) {
                conflicts[writer]++;
                next += log.read(next).size();
              }
            }
          }
          return null;
        }));
      }
      for (Future<?> f : fs) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    List<CatalogEntry> a = handles.get(0).read(0);
    List<CatalogEntry> b = handles.get(1).read(0);
    assertThat(a).isEqualTo(b).hasSize(2 * n);
    Set<String> seen = new HashSet<>();
    int[] lastOf = {-1, -1};
    for (int p = 0; p < a.size(); p++) {
      CatalogEntry e = a.get(p);
      assertThat(e.position()).isEqualTo(p);
      assertThat(seen.add(e.sql())).as("entry %s appears once", e.sql()).isTrue();
      String[] words = e.sql().split(" ");
      int writer = Integer.parseInt(words[2]);
      int i = Integer.parseInt(words[4]);
      assertThat(i).as("writer %d's entries in order", writer).isEqualTo(lastOf[writer] + 1);
      lastOf[writer] = i;
    }
    assertThat(lastOf).containsExactly(n - 1, n - 1);
    System.out.printf("%s: %d appends by 2 racing writers, conflicts %d + %d%n",
        getClass().getSimpleName(), 2 * n, conflicts[0], conflicts[1]);
  }

  /** Two nodes executing DDL through SqlSession on one catalog end with the same dataflows; a fresh engine replays them. */
  @Test
  void sessionsOnTheSameCatalogAgreeAndReplay() throws Exception {
    List<CatalogLog> handles = logs(3);
    Clock clock = Clock.fixed(T0, java.time.ZoneOffset.UTC);
    TickPolicy policy = new TickPolicy(1000, Duration.ofMillis(10));
    try (Engine ea = Engine.builder().workers(1).tickPolicy(policy).build();
        Engine eb = Engine.builder().workers(2).tickPolicy(policy).build()) {
      SqlSession a = new SqlSession(ea, handles.get(0), clock);
      SqlSession b = new SqlSession(eb, handles.get(1), clock);
      a.execute("CREATE SOURCE gen FROM LOAD GENERATOR (keys = 100, limit = 2000) ENVELOPE UPSERT");
      CyclicBarrier start = new CyclicBarrier(2);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        List<Future<?>> fs = new ArrayList<>();
        for (SqlSession s : List.of(a, b)) {
          String tag = s == a ? "a" : "b";
          fs.add(pool.submit(() -> {
            start.await();
            for (int i = 0; i < sessionViews(); i++) {
              s.execute("CREATE MATERIALIZED VIEW " + tag + i + " AS SELECT category, COUNT(*) AS n FROM gen WHERE amount > "
                  + (i * 100) + " GROUP BY category");
            }
            s.execute("DROP VIEW " + tag + "3");
            return null;
          }));
        }
        for (Future<?> f : fs) {
          f.get(120, TimeUnit.SECONDS);
        }
      } finally {
        pool.shutdownNow();
      }
      a.replayAll();
      b.replayAll();
      int v = sessionViews();
      assertThat(a.position()).isEqualTo(b.position()).isEqualTo(1 + 2 * (v + 1));
      assertThat(ids(ea)).isEqualTo(ids(eb)).hasSize(1 + 2 * (v - 1));
      ea.tickUntilCaughtUp(100);
      eb.tickUntilCaughtUp(100);
      Map<String, List<Row>> results = contents(ea);
      assertThat(contents(eb)).isEqualTo(results);
      try (Engine fresh = Engine.builder().workers(3).tickPolicy(policy).build()) {
        SqlSession c = new SqlSession(fresh, handles.get(2), clock);
        assertThat(c.replayAll()).isEqualTo(1 + 2 * (v + 1));
        assertThat(ids(fresh)).isEqualTo(ids(ea));
        fresh.tickUntilCaughtUp(100);
        assertThat(contents(fresh)).isEqualTo(results);
      }
    }
  }

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
}
