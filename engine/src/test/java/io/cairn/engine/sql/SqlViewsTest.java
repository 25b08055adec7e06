package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Views created through SQL hold what a naive evaluation of the same query over the generator's table gives. */
class SqlViewsTest {

  @ParameterizedTest
  @ValueSource(ints = {1, 3})
  void viewsMatchOracle(int workers) {
    try (Engine e = SqlFixture.engine(workers)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN + ";");
      s.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total, MIN(amount) AS lo, "
          + "MAX(amount) AS hi, AVG(amount) AS mean FROM gen GROUP BY category");
      s.execute("CREATE MATERIALIZED VIEW big AS SELECT id, amount * 2 + 1 AS twice, category FROM gen WHERE amount > 500 AND NOT category = 3");
      s.execute("CREATE MATERIALIZED VIEW cats AS SELECT DISTINCT category FROM gen WHERE amount < 100");
      s.execute("CREATE MATERIALIZED VIEW pairs AS SELECT g.id, g.category, c.n FROM gen g JOIN by_cat c ON g.category = c.category WHERE g.amount >= 900");
      s.execute("CREATE MATERIALIZED VIEW heavy AS SELECT category, COUNT(amount) FROM gen GROUP BY category HAVING SUM(amount) > 50000");
      e.tickUntilCaughtUp(1000);
      Map<Long, Row> t = SqlFixture.table(5000);

      Map<Long, List<Long>> groups = new TreeMap<>();
      t.values().forEach(r -> groups.computeIfAbsent(r.getLong(1), k -> new ArrayList<>()).add(r.getLong(2)));
      List<Row> byCat = new ArrayList<>();
      groups.forEach((c, v) -> byCat.add(Row.of(c, (long) v.size(), v.stream().mapToLong(x -> x).sum(),
          v.stream().mapToLong(x -> x).min().getAsLong(), v.stream().mapToLong(x -> x).max().getAsLong(),
          v.stream().mapToLong(x -> x).average().getAsDouble())));
      List<Row> got = e.peek("by_cat");
      assertThat(got).hasSameSizeAs(byCat);
      for (int i = 0; i < got.size(); i++) {
        assertThat(got.get(i).select(new int[] {0, 1, 2, 3, 4})).isEqualTo(byCat.get(i).select(new int[] {0, 1, 2, 3, 4}));
        assertThat(got.get(i).getDouble(5)).isCloseTo(byCat.get(i).getDouble(5), org.assertj.core.data.Offset.offset(1e-9));
      }

      List<Row> big = t.values().stream().filter(r -> r.getLong(2) > 500 && r.getLong(1) != 3)
          .map(r -> Row.of(r.getLong(0), r.getLong(2) * 2 + 1, r.getLong(1))).sorted().toList();
      assertThat(e.peek("big")).containsExactlyElementsOf(big);

      List<Row> cats = t.values().stream().filter(r -> r.getLong(2) < 100).map(r -> Row.of(r.getLong(1)))
          .collect(Collectors.toCollection(TreeSet::new)).stream().toList();
      assertThat(e.peek("cats")).containsExactlyElementsOf(cats);

      List<Row> pairs = t.values().stream().filter(r -> r.getLong(2) >= 900)
          .map(r -> Row.of(r.getLong(0), r.getLong(1), (long) groups.get(r.getLong(1)).size())).sorted().toList();
      assertThat(pairs).isNotEmpty();
      assertThat(e.peek("pairs")).containsExactlyElementsOf(pairs);

      List<Row> heavy = new ArrayList<>();
      groups.forEach((c, v) -> {
        if (v.stream().mapToLong(x -> x).sum() > 50000) {
          heavy.add(Row.of(c, (long) v.size()));
        }
      });
      assertThat(e.peek("heavy")).containsExactlyElementsOf(heavy);

      // one-shot queries answered from the arrangement
      Result lookup = s.execute("SELECT category, n FROM by_cat WHERE category = 4");
      assertThat(lookup.message()).isEqualTo("SELECT 1 (key lookup)");
      assertThat(lookup.rows()).containsExactly(List.of(4L, (long) groups.get(4L).size()));
      Result point = s.execute("SELECT * FROM gen WHERE id = 17");
      assertThat(point.message()).contains("key lookup");
      assertThat(point.rows()).containsExactly(t.get(17L) == null ? List.of() : t.get(17L).toList());
      // a quoted number compared with a BIGINT column is read as a BIGINT, as PostgreSQL reads an untyped literal
      Result quoted = s.execute("SELECT * FROM gen WHERE id = '17'");
      assertThat(quoted.message()).contains("key lookup");
      assertThat(quoted.rows()).isEqualTo(point.rows());
      assertThat(s.execute("SELECT id FROM big WHERE '1' = category AND id < ' 100'").rows())
          .isEqualTo(s.execute("SELECT id FROM big WHERE 1 = category AND id < 100").rows());
      Result scan = s.execute("SELECT id FROM big WHERE category = 1 LIMIT 3");
      assertThat(scan.message()).isEqualTo("SELECT 3");
      assertThat(scan.rows()).containsExactlyElementsOf(
          big.stream().filter(r -> r.getLong(2) == 1).map(r -> List.<Object>of(r.getLong(0))).sorted((a, b) -> Long.compare((Long) a.get(0), (Long) b.get(0))).limit(3).toList());
      assertThat(scan.render()).startsWith(" id\n----\n").contains("(3 rows)");
    }
  }

  @Test
  void showAndExplain() {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
      Result sources = s.execute("SHOW SOURCES");
      assertThat(sources.columns()).containsExactly("name", "id", "connector", "envelope", "state", "error");
      assertThat(sources.rows()).containsExactly(java.util.Arrays.asList("gen", 0L, "load-generator", "UPSERT", "RUNNING", null));
      s.execute("CREATE SOURCE events FROM LOAD GENERATOR (append = true)");
      assertThat(s.execute("SHOW SOURCES").rows().get(1)).containsExactly("events", 2L, "load-generator", "NONE", "RUNNING", null);
      Result views = s.execute("show views;");
      assertThat(views.rows()).hasSize(1);
      assertThat(views.rows().get(0).subList(0, 3)).containsExactly("by_cat", 1L, "RUNNING");
      Result explain = s.execute("EXPLAIN VIEW by_cat");
      String text = explain.render();
      assertThat(text).contains("View by_cat (dataflow 1, RUNNING), arranged by (category)").contains("Reduce group by").contains("Get gen");
      assertThat(s.execute("EXPLAIN SELECT id FROM gen WHERE amount > 3").render()).contains("Filter").contains("Get gen");
      assertThat(s.execute("EXPLAIN CREATE MATERIALIZED VIEW x AS SELECT category, COUNT(*) FROM gen GROUP BY category").render())
          .contains("View x (not created), arranged by (category)");
      assertThat(s.position()).isEqualTo(3);
    }
  }
}
