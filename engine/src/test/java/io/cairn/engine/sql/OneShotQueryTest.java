package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * One-shot SELECTs that no arrangement answers as it is (aggregates, joins, DISTINCT over them),
 * evaluated by a transient dataflow, with ORDER BY, OFFSET and LIMIT: against a naive evaluation
 * over the load generator's table, and against the same query as a materialized view.
 */
class OneShotQueryTest {
  static final Map<Long, Row> TABLE = SqlFixture.table(5000);

  private static List<List<Object>> rows(SqlSession s, String sql) {
    return s.execute(sql).rows();
  }

  private static List<List<Object>> asLists(List<Row> rows) {
    return rows.stream().map(r -> Arrays.asList(r.toArray())).toList();
  }

  /** category → {count, sum(amount), min(id)} over the rows that {@code where} keeps. */
  private static Map<Long, long[]> groups(SqlPropertyTest.Pred where) {
    Map<Long, long[]> groups = new TreeMap<>();
    for (Row r : TABLE.values()) {
      if (where.test().test(r)) {
        long[] acc = groups.computeIfAbsent(r.getLong(1), c -> new long[] {0, 0, Long.MAX_VALUE});
        acc[0]++;
        acc[1] += r.getLong(2);
        acc[2] = Math.min(acc[2], r.getLong(0));
      }
    }
    return groups;
  }

  @Test
  void aggregatesEqualTheOracleAndTheSameQueryAsAView() {
    Property.tries(10).forAll(SqlPropertyTest.PREDICATES, where -> {
      try (Engine e = SqlFixture.engine(2)) {
        SqlSession s = SqlFixture.session(e);
        s.execute(SqlFixture.GEN);
        e.tickUntilCaughtUp(100);
        String q = "SELECT category, COUNT(*) AS n, SUM(amount) AS total, MIN(id) AS lo FROM gen WHERE " + where.sql()
            + " GROUP BY category";
        List<Row> expected = new ArrayList<>();
        groups(where).forEach((c, a) -> expected.add(Row.of(c, a[0], a[1], a[2])));
        assertThat(rows(s, q)).as(q).isEqualTo(asLists(expected));
        s.execute("CREATE MATERIALIZED VIEW g AS " + q);
        e.tickUntilCaughtUp(100);
        assertThat(rows(s, "SELECT * FROM g")).as("the view of " + q).isEqualTo(asLists(expected));
        // ordered by the count, largest first, ties by category descending; then a window of it
        List<Row> ordered = new ArrayList<>(expected);
        ordered.sort(Comparator.<Row>comparingLong(r -> -r.getLong(1)).thenComparing(r -> -r.getLong(0)));
        assertThat(rows(s, q + " ORDER BY n DESC, 1 DESC")).isEqualTo(asLists(ordered));
        assertThat(rows(s, q + " ORDER BY n DESC, category DESC LIMIT 3 OFFSET 2"))
            .isEqualTo(asLists(ordered.subList(Math.min(2, ordered.size()), Math.min(5, ordered.size()))));
      }
    });
  }

  @Test
  void aCountOfAViewAndAJoinOfASourceWithAView() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
      e.tickUntilCaughtUp(100);
      Map<Long, long[]> groups = groups(new SqlPropertyTest.Pred("TRUE", r -> true));
      // what a BI tool sends first
      assertThat(rows(s, "SELECT count(*) FROM by_cat")).containsExactly(List.of((long) groups.size()));
      assertThat(rows(s, "SELECT count(*) AS rows FROM gen")).containsExactly(List.of((long) TABLE.size()));
      List<Row> expected = new ArrayList<>();
      for (Row r : TABLE.values()) {
        if (r.getLong(0) < 60) {
          expected.add(Row.of(r.getLong(0), groups.get(r.getLong(1))[0]));
        }
      }
      expected.sort(Comparator.<Row>comparingLong(r -> r.getLong(1)).thenComparingLong(r -> r.getLong(0)));
      assertThat(rows(s, "SELECT gen.id, by_cat.n FROM gen JOIN by_cat ON gen.category = by_cat.category WHERE gen.id < 60"
          + " ORDER BY n, id")).isEqualTo(asLists(expected));
      assertThat(rows(s, "SELECT DISTINCT n FROM gen JOIN by_cat ON gen.category = by_cat.category ORDER BY n DESC LIMIT 1"))
          .containsExactly(List.of(groups.values().stream().mapToLong(a -> a[0]).max().orElseThrow()));
    }
  }

  @Test
  void theTransientDataflowIsNeverListedNorCapturedAndIsGoneAfterwards() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(100);
      int arrangements = e.arrangementCount();
      List<String> before = e.dataflows().stream().map(d -> d.name()).toList();
      for (int i = 0; i < 5; i++) {
        assertThat(rows(s, "SELECT category, COUNT(*) FROM gen GROUP BY category")).hasSize(groups(new SqlPropertyTest.Pred("TRUE", r -> true)).size());
      }
      assertThat(e.dataflows().stream().map(d -> d.name()).toList()).isEqualTo(before);
      assertThat(e.arrangementCount()).as("the transient dataflows' arrangements are released").isEqualTo(arrangements);
      // a snapshot taken while a transient dataflow lives (from the statement's budget checks) leaves it out
      java.util.concurrent.atomic.AtomicInteger capturedWhileAlive = new java.util.concurrent.atomic.AtomicInteger();
      List<String> capturedViews = new java.util.concurrent.CopyOnWriteArrayList<>();
      StatementBudget budget = StatementBudget.of(java.time.Duration.ofSeconds(30), () -> {
        if (e.arrangementCount() > arrangements) {
          capturedWhileAlive.incrementAndGet();
          e.capture().views().forEach(v -> capturedViews.add(v.name()));
        }
        return false;
      });
      assertThat(s.execute("SELECT category, COUNT(*) FROM gen GROUP BY category", budget).rows()).isNotEmpty();
      assertThat(capturedWhileAlive.get()).as("a capture ran while the transient dataflow existed").isPositive();
      assertThat(capturedViews).noneMatch(Engine::isTransient);
      assertThat(rows(s, "SHOW VIEWS")).isEmpty();
    }
  }

  @Test
  void orderByNullsAndBadWindowsAreClearErrors() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(100);
      assertThat(rows(s, "SELECT id FROM gen ORDER BY id DESC LIMIT 2")).containsExactly(
          List.of(TABLE.keySet().stream().max(Long::compare).orElseThrow()),
          List.of(TABLE.keySet().stream().sorted(Comparator.reverseOrder()).skip(1).findFirst().orElseThrow()));
      assertThat(rows(s, "SELECT id FROM gen ORDER BY id LIMIT 0")).isEmpty();
      assertThat(rows(s, "SELECT id FROM gen ORDER BY id OFFSET 1000000")).isEmpty();
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen ORDER BY nope"))
          .hasMessageContaining("ORDER BY 'nope' is not a column of the result [id]");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen ORDER BY 2")).hasMessageContaining("ORDER BY position 2 is not in the select list (1..1)");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen ORDER BY id + 1")).hasMessageContaining("takes an output column's name or position");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen LIMIT -1")).hasMessageContaining("LIMIT takes a non-negative integer");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen OFFSET -1")).isInstanceOf(SqlException.class);
      assertThatThrownBy(() -> s.execute("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen ORDER BY id"))
          .hasMessageContaining("unsupported syntax: ORDER BY without LIMIT in a view");
    }
  }

  @Test
  void explainSaysWhatATransientDataflowCopiesAndACopyTooLargeIsRefused() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(100);
      String plan = s.execute("EXPLAIN SELECT category, COUNT(*) FROM gen GROUP BY category").render();
      java.util.regex.Matcher m = java.util.regex.Pattern.compile("One-shot: a transient dataflow arranges its inputs \\[gen\\]: a copy of at most (\\d+) rows")
          .matcher(plan);
      assertThat(m.find()).as(plan).isTrue();
      assertThat(Long.parseLong(m.group(1))).isGreaterThanOrEqualTo(TABLE.size());
      assertThat(s.execute("EXPLAIN SELECT id FROM gen WHERE id = 3").render()).doesNotContain("One-shot");
      s.maxTransientCopyBytes(1024);
      assertThatThrownBy(() -> s.execute("SELECT category, COUNT(*) FROM gen GROUP BY category"))
          .hasMessageContaining("Cannot evaluate query: it would copy [gen] (about 0 MB of state) into a transient dataflow")
          .hasMessageContaining("create a materialized view of it and select from the view");
      assertThat(rows(s, "SELECT id FROM gen WHERE id < 3")).as("a scan copies nothing").hasSize((int) TABLE.keySet().stream().filter(k -> k < 3).count());
      assertThat(e.dataflows()).hasSize(1);
    }
  }

  /** NULLs last ascending and first descending, as PostgreSQL; NULLS FIRST/LAST as written; ties keep the result's order. */
  @Test
  void nullsAreOrderedAsPostgresOrdersThem() throws Exception {
    io.cairn.engine.row.Schema schema = io.cairn.engine.row.Schema.of(
        io.cairn.engine.row.Column.of("id", io.cairn.engine.row.Type.BIGINT), io.cairn.engine.row.Column.of("x", io.cairn.engine.row.Type.TEXT));
    List<Row> in = List.of(Row.of(1L, "b"), Row.of(2L, null), Row.of(3L, "a"), Row.of(4L, null), Row.of(5L, "b"));
    java.util.function.Function<String, List<Long>> ids = order -> {
      try {
        var ps = (net.sf.jsqlparser.statement.select.PlainSelect) net.sf.jsqlparser.parser.CCJSqlParserUtil.parse("SELECT id, x FROM t " + order);
        return ResultWindow.of(ps, schema).apply(in, () -> {}).stream().map(r -> r.getLong(0)).toList();
      } catch (net.sf.jsqlparser.JSQLParserException e) {
        throw new AssertionError(e);
      }
    };
    assertThat(ids.apply("ORDER BY x")).containsExactly(3L, 1L, 5L, 2L, 4L);
    assertThat(ids.apply("ORDER BY x DESC")).containsExactly(2L, 4L, 1L, 5L, 3L);
    assertThat(ids.apply("ORDER BY x NULLS FIRST")).containsExactly(2L, 4L, 3L, 1L, 5L);
    assertThat(ids.apply("ORDER BY x DESC NULLS LAST, id DESC")).containsExactly(5L, 1L, 3L, 4L, 2L);
    assertThat(ids.apply("ORDER BY 2 LIMIT 2 OFFSET 1")).containsExactly(1L, 5L);
    assertThat(ids.apply("")).containsExactly(1L, 2L, 3L, 4L, 5L);
  }
}
