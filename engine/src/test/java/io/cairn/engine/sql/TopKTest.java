package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * ORDER BY … LIMIT / OFFSET inside views (top-k) and DISTINCT ON (top-1 per group), against an
 * oracle that sorts the final tables: the sources are upsert streams with deletes read over many
 * ticks, so rows enter the window, are retracted from it and are replaced by the next ones; ties
 * are broken by the whole row; and a restore from a snapshot taken half-way ends equal without
 * recomputing.
 */
class TopKTest {
  static final List<String> STATEMENTS = List.of(SqlFixture.GEN, OuterJoinTest.SIDE,
      "CREATE MATERIALIZED VIEW top5 AS SELECT id, amount FROM gen ORDER BY amount DESC LIMIT 5",
      "CREATE MATERIALIZED VIEW page AS SELECT id, category, amount FROM gen ORDER BY category, amount DESC LIMIT 7 OFFSET 3",
      "CREATE MATERIALIZED VIEW best_cats AS SELECT category, SUM(amount) AS total FROM gen GROUP BY category"
          + " ORDER BY total DESC LIMIT 3",
      "CREATE MATERIALIZED VIEW richest AS SELECT DISTINCT ON (category) category, id, amount FROM gen"
          + " ORDER BY category, amount DESC, id",
      "CREATE MATERIALIZED VIEW low AS SELECT COUNT(*) AS n, SUM(amount) AS s FROM"
          + " (SELECT id, amount FROM gen ORDER BY amount LIMIT 20) AS cheapest",
      "CREATE MATERIALIZED VIEW last_ids AS SELECT id FROM gen UNION SELECT id FROM side ORDER BY id DESC LIMIT 4",
      "CREATE MATERIALIZED VIEW dup AS SELECT category FROM gen ORDER BY 1 LIMIT 25");

  /** Rows {@code offset} to {@code offset + limit} of {@code rows} in {@code order}, then the whole row. */
  static List<Row> window(List<Row> rows, Comparator<Row> order, int offset, int limit) {
    List<Row> sorted = new ArrayList<>(rows);
    sorted.sort(order.thenComparing(Comparator.naturalOrder()));
    List<Row> out = new ArrayList<>(sorted.subList(Math.min(offset, sorted.size()), Math.min(offset + limit, sorted.size())));
    out.sort(Row::compareTo);
    return out;
  }

  static Comparator<Row> col(int i) {
    return Comparator.comparingLong(r -> r.getLong(i));
  }

  static Map<String, List<Row>> oracle() {
    List<Row> gen = new ArrayList<>(SqlFixture.table(5000).values());
    Function<Function<Row, Row>, List<Row>> project = f -> gen.stream().map(f).collect(Collectors.toList());
    Map<String, List<Row>> out = new TreeMap<>();
    out.put("top5", window(project.apply(g -> Row.of(g.getLong(0), g.getLong(2))), col(1).reversed(), 0, 5));
    out.put("page", window(gen, col(1).thenComparing(col(2).reversed()), 3, 7));
    Map<Long, Long> totals = new TreeMap<>();
    gen.forEach(g -> totals.merge(g.getLong(1), g.getLong(2), Long::sum));
    List<Row> totalRows = new ArrayList<>();
    totals.forEach((c, t) -> totalRows.add(Row.of(c, t)));
    out.put("best_cats", window(totalRows, col(1).reversed(), 0, 3));
    Map<Long, Row> richest = new TreeMap<>();
    Comparator<Row> better = col(2).reversed().thenComparing(col(1));
    for (Row g : gen) {
      Row r = Row.of(g.getLong(1), g.getLong(0), g.getLong(2));
      richest.merge(g.getLong(1), r, (a, b) -> better.compare(a, b) <= 0 ? a : b);
    }
    out.put("richest", new ArrayList<>(richest.values()));
    List<Row> cheapest = window(project.apply(g -> Row.of(g.getLong(0), g.getLong(2))), col(1), 0, 20);
    out.put("low", new ArrayList<>(List.of(Row.of((long) cheapest.size(), cheapest.stream().mapToLong(r -> r.getLong(1)).sum()))));
    TreeSet<Long> ids = new TreeSet<>();
    gen.forEach(g -> ids.add(g.getLong(0)));
    ids.addAll(OuterJoinTest.side().keySet());
    out.put("last_ids", window(ids.stream().map(i -> Row.of(i)).collect(Collectors.toList()), col(0).reversed(), 0, 4));
    out.put("dup", window(project.apply(g -> Row.of(g.getLong(1))), col(0), 0, 25));
    out.values().forEach(r -> r.sort(Row::compareTo));
    return out;
  }

  @Test
  void topKViewsEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    assertThat(expected.get("top5")).hasSize(5);
    assertThat(expected.get("richest")).hasSize(10);
    assertThat(expected.get("dup")).as("a row present many times fills many positions").hasSize(25);
    assertThat(new TreeSet<>(expected.get("dup"))).hasSizeLessThan(5);
    SqlFixture.assertViewsEqualOracleAcrossARestore(STATEMENTS, expected);
  }

  /**
   * Groups of thousands of rows, so that the operator keeps their heads between ticks: the same
   * oracle through upserts, deletes and a restore (whose fresh engine starts without heads).
   */
  @Test
  void largeGroupsEqualTheOracleAcrossARestore() {
    List<Row> gen = new ArrayList<>(SqlFixture.table(4000, 9000).values());
    assertThat(gen).as("one group of thousands of rows").hasSizeGreaterThan(3000);
    Map<String, List<Row>> expected = new TreeMap<>();
    expected.put("top_big", window(gen.stream().map(g -> Row.of(g.getLong(0), g.getLong(2))).collect(Collectors.toList()),
        col(1).reversed(), 0, 5));
    expected.put("page_big", window(gen, col(2).thenComparing(col(0)), 40, 9));
    expected.values().forEach(r -> r.sort(Row::compareTo));
    SqlFixture.assertViewsEqualOracleAcrossARestore(List.of(
        "CREATE SOURCE gen FROM LOAD GENERATOR (keys = 4000, limit = 9000, seed = 7) ENVELOPE UPSERT",
        "CREATE MATERIALIZED VIEW top_big AS SELECT id, amount FROM gen ORDER BY amount DESC LIMIT 5",
        "CREATE MATERIALIZED VIEW page_big AS SELECT id, category, amount FROM gen ORDER BY amount, id LIMIT 9 OFFSET 40"),
        expected);
  }

  /**
   * The heads a top-k keeps over a large group count in the engine's memory figures beside the
   * arrangements: a few windows of rows, not the group; none once the view is dropped.
   */
  @Test
  void keptHeadsCountInTheMemoryFigures() {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute("CREATE SOURCE gen FROM LOAD GENERATOR (keys = 4000, limit = 9000, seed = 7) ENVELOPE UPSERT");
      s.execute("CREATE MATERIALIZED VIEW plain AS SELECT id, amount FROM gen WHERE amount > 0");
      e.tickUntilCaughtUp(200);
      assertThat(e.metrics().operatorBytes()).as("no top-k, no heads").isZero();
      s.execute("CREATE MATERIALIZED VIEW top_big AS SELECT id, amount FROM gen ORDER BY amount DESC LIMIT 5");
      e.tick();
      e.tick();
      Engine.Metrics m = e.metrics();
      long perRow = Row.of(1L, 2L).heapBytes() + 56;
      assertThat(m.operatorBytes()).as("one head of at most 2 × (2 × 5 + 16) rows")
          .isGreaterThanOrEqualTo(perRow).isLessThanOrEqualTo(2 * (2 * 5 + 16) * perRow + 200);
      assertThat(m.operatorBytes()).as("far less than the group's arrangement").isLessThan(m.arrangementBytes() / 10);
      s.execute("DROP VIEW top_big");
      assertThat(e.metrics().operatorBytes()).as("the dropped view's heads").isZero();
    }
  }

  @Test
  void explainShowsTheTopKAndItsMistakesAreNamed() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      String plan = s.execute("EXPLAIN CREATE MATERIALIZED VIEW t AS SELECT id FROM gen ORDER BY id DESC LIMIT 3 OFFSET 1")
          .rows().toString();
      assertThat(plan).contains("TopK order by").contains("offset 1").contains("limit 3");
      assertThatThrownBy(() -> s.execute("CREATE MATERIALIZED VIEW t AS SELECT id FROM gen ORDER BY amount LIMIT 3"))
          .hasMessageContaining("ORDER BY 'amount' is not a column of the result [id]");
      assertThatThrownBy(() -> s.execute("CREATE MATERIALIZED VIEW t AS SELECT DISTINCT ON (category) category, id FROM gen ORDER BY id"))
          .hasMessageContaining("DISTINCT ON expressions must match initial ORDER BY expressions");
      assertThatThrownBy(() -> s.execute("CREATE MATERIALIZED VIEW t AS SELECT id FROM gen ORDER BY id LIMIT -2"))
          .hasMessageContaining("LIMIT takes a non-negative integer");
      // a one-shot DISTINCT ON keeps one row per group, and the query's ORDER BY orders them
      e.tickUntilCaughtUp(1000);
      List<List<Object>> rows = s.execute("SELECT DISTINCT ON (category) category, amount FROM gen ORDER BY category, amount DESC").rows();
      Map<Long, Long> max = new TreeMap<>();
      SqlFixture.table(5000).values().forEach(g -> max.merge(g.getLong(1), g.getLong(2), Math::max));
      assertThat(rows).isEqualTo(max.entrySet().stream().map(x -> List.<Object>of(x.getKey(), x.getValue())).toList());
    }
  }
}
