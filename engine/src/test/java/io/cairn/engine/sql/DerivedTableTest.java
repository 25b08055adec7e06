package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Subqueries in FROM (derived tables) in views — grouped twice (TPC-H Q13's shape, with the outer
 * join inside), joined with a source, over a UNION ALL — against oracles over the final tables:
 * the sources are upsert streams with deletes read over many ticks, and a restore from a snapshot
 * taken half-way ends equal without recomputing.
 */
class DerivedTableTest {
  static final List<String> STATEMENTS = List.of(SqlFixture.GEN, OuterJoinTest.SIDE,
      "CREATE MATERIALIZED VIEW twice AS SELECT c_count, COUNT(*) AS custdist"
          + " FROM (SELECT category, COUNT(*) FROM gen GROUP BY category) AS per_cat (cat, c_count) GROUP BY c_count",
      "CREATE MATERIALIZED VIEW q13 AS SELECT n, COUNT(*) AS k FROM (SELECT gen.id, COUNT(side.id) AS n FROM gen"
          + " LEFT OUTER JOIN side ON gen.category = side.id AND side.amount > 500 GROUP BY gen.id) AS per GROUP BY n",
      "CREATE MATERIALIZED VIEW joined AS SELECT gen.id, big.total FROM gen"
          + " JOIN (SELECT category, SUM(amount) AS total FROM gen GROUP BY category) AS big ON gen.category = big.category"
          + " WHERE gen.amount > 900",
      "CREATE MATERIALIZED VIEW unioned AS SELECT x, COUNT(*) AS n FROM"
          + " (SELECT category AS x FROM gen UNION ALL SELECT id AS x FROM side) AS u GROUP BY x");

  static Map<String, List<Row>> oracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, Row> side = OuterJoinTest.side();
    Map<Long, Long> perCat = new TreeMap<>();
    Map<Long, Long> totals = new TreeMap<>();
    Map<Long, Long> unioned = new TreeMap<>();
    Map<Long, Long> q13 = new TreeMap<>();
    for (Row g : gen.values()) {
      perCat.merge(g.getLong(1), 1L, Long::sum);
      totals.merge(g.getLong(1), g.getLong(2), Long::sum);
      unioned.merge(g.getLong(1), 1L, Long::sum);
      Row s = side.get(g.getLong(1));
      q13.merge(s != null && s.getLong(2) > 500 ? 1L : 0L, 1L, Long::sum);
    }
    side.keySet().forEach(id -> unioned.merge(id, 1L, Long::sum));
    Map<Long, Long> twice = new TreeMap<>();
    perCat.values().forEach(n -> twice.merge(n, 1L, Long::sum));
    List<Row> joined = new ArrayList<>();
    for (Row g : gen.values()) {
      if (g.getLong(2) > 900) {
        joined.add(Row.of(g.getLong(0), totals.get(g.getLong(1))));
      }
    }
    Map<String, List<Row>> out = new TreeMap<>();
    out.put("twice", rows(twice));
    out.put("q13", rows(q13));
    out.put("joined", joined);
    out.put("unioned", rows(unioned));
    out.values().forEach(r -> r.sort(Row::compareTo));
    return out;
  }

  private static List<Row> rows(Map<Long, Long> m) {
    List<Row> out = new ArrayList<>();
    m.forEach((k, v) -> out.add(Row.of(k, v)));
    return out;
  }

  @Test
  void derivedTablesEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    assertThat(expected.get("q13")).as("both counts occur").hasSize(2);
    assertThat(expected.get("joined")).isNotEmpty();
    SqlFixture.assertViewsEqualOracleAcrossARestore(STATEMENTS, expected);
  }

  @Test
  void aOneShotQueryTakesADerivedTableAndItsColumnNames() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      Result r = s.execute("SELECT t.c, t.n FROM (SELECT category, COUNT(*) FROM gen GROUP BY category) AS t (c, n) ORDER BY c LIMIT 2");
      assertThat(r.columns()).containsExactly("c", "n");
      Map<Long, Long> perCat = new TreeMap<>();
      SqlFixture.table(5000).values().forEach(g -> perCat.merge(g.getLong(1), 1L, Long::sum));
      List<List<Object>> want = perCat.entrySet().stream().limit(2).map(x -> List.<Object>of(x.getKey(), x.getValue())).toList();
      assertThat(r.rows()).isEqualTo(want);
    }
  }

  @Test
  void aDerivedTableWithoutAliasOrWithTooManyNamesIsRefusedNamingWhy() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      assertThatThrownBy(() -> s.execute("SELECT * FROM (SELECT id FROM gen)"))
          .hasMessageContaining("a subquery in FROM must have an alias");
      assertThatThrownBy(() -> s.execute("SELECT * FROM (SELECT id FROM gen) AS t (a, b)"))
          .hasMessageContaining("table 't' has 1 columns available but 2 columns specified");
      assertThatThrownBy(() -> s.execute("SELECT * FROM gen JOIN (SELECT id FROM gen) AS gen ON gen.id = gen.id"))
          .hasMessageContaining("table name 'gen' is used twice in FROM");
      assertThatThrownBy(() -> s.execute("SELECT * FROM (SELECT nope FROM gen) AS t"))
          .hasMessageContaining("nope");
    }
  }
}
