package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * DATE as a column type: views whose columns, group keys, join keys and conditions are DATEs
 * (days since 1970-01-01), with PostgreSQL's date arithmetic (DATE ± days, DATE − DATE, DATE ±
 * INTERVAL is a TIMESTAMP, a DATE compared with a TIMESTAMP is its midnight), against an oracle
 * computed with java.time over the generator's final table; the source is an upsert stream with
 * deletes read over many ticks (inserts, updates and retractions reach every view), and the views
 * are restored from a snapshot taken half-way without being recomputed.
 */
class DateTypeTest {
  static final LocalDate BASE = LocalDate.parse("2020-01-01");
  static final List<String> VIEWS = List.of(
      "CREATE MATERIALIZED VIEW d AS SELECT id, DATE '2020-01-01' + amount % 400 AS shipped, category FROM gen",
      "CREATE MATERIALIZED VIEW by_day AS SELECT shipped, COUNT(*) AS n, MIN(id) AS lo FROM d GROUP BY shipped",
      "CREATE MATERIALIZED VIEW by_cat AS SELECT category, MIN(shipped) AS first, MAX(shipped) AS last FROM d GROUP BY category",
      "CREATE MATERIALIZED VIEW june AS SELECT id, shipped FROM d WHERE shipped >= DATE '2020-06-01' AND shipped < DATE '2020-06-01' + INTERVAL '1' MONTH",
      "CREATE MATERIALIZED VIEW span AS SELECT id, shipped - DATE '2020-01-01' AS days, shipped + 7 AS week_later, EXTRACT(month FROM shipped) AS m"
          + " FROM d WHERE shipped - 30 > '2020-02-01'",
      "CREATE MATERIALIZED VIEW same_day AS SELECT a.id AS a, b.id AS b FROM d a JOIN d b ON a.shipped = b.shipped WHERE a.id < b.id");

  /** The views' rows, from java.time over the generator's table. */
  static Map<String, List<Row>> oracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, LocalDate> day = new TreeMap<>();
    Map<Long, Long> cat = new TreeMap<>();
    gen.forEach((id, r) -> {
      day.put(id, BASE.plusDays(r.getLong(2) % 400)); // SQL's % truncates, as Java's
      cat.put(id, r.getLong(1));
    });
    Map<String, List<Row>> out = new TreeMap<>();
    List<Row> d = new ArrayList<>();
    Map<Long, long[]> byDay = new TreeMap<>();
    Map<Long, long[]> byCat = new TreeMap<>();
    List<Row> june = new ArrayList<>();
    List<Row> span = new ArrayList<>();
    day.forEach((id, x) -> {
      long e = x.toEpochDay();
      d.add(Row.of(id, e, cat.get(id)));
      byDay.merge(e, new long[] {1, id}, (a, b) -> new long[] {a[0] + 1, Math.min(a[1], b[1])});
      byCat.merge(cat.get(id), new long[] {e, e}, (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
      if (!x.isBefore(LocalDate.parse("2020-06-01")) && x.isBefore(LocalDate.parse("2020-07-01"))) {
        june.add(Row.of(id, e));
      }
      if (x.minusDays(30).isAfter(LocalDate.parse("2020-02-01"))) {
        span.add(Row.of(id, e - BASE.toEpochDay(), e + 7, (long) x.getMonthValue()));
      }
    });
    List<Row> same = new ArrayList<>();
    day.forEach((a, x) -> day.forEach((b, y) -> {
      if (a < b && x.equals(y)) {
        same.add(Row.of(a, b));
      }
    }));
    out.put("d", d);
    out.put("by_day", byDay.entrySet().stream().map(en -> Row.of(en.getKey(), en.getValue()[0], en.getValue()[1])).toList());
    out.put("by_cat", byCat.entrySet().stream().map(en -> Row.of(en.getKey(), en.getValue()[0], en.getValue()[1])).toList());
    out.put("june", june);
    out.put("span", span);
    out.put("same_day", same);
    out.replaceAll((k, rows) -> rows.stream().sorted(Row::compareTo).toList());
    return out;
  }

  @Test
  void dateColumnsEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    assertThat(expected.get("june")).isNotEmpty();
    assertThat(expected.get("same_day")).isNotEmpty();
    assertThat(expected.get("span").size()).isLessThan(expected.get("d").size()).isPositive();
    List<String> statements = new java.util.ArrayList<>(List.of(SqlFixture.GEN));
    statements.addAll(VIEWS);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);
    try (Engine a = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(a);
      statements.forEach(s::execute);
      a.tickUntilCaughtUp(1000);
      Result r = s.execute("SELECT shipped, n FROM by_day ORDER BY shipped LIMIT 1");
      assertThat(r.types()).containsExactly(Type.DATE, Type.BIGINT);
      assertThat(r.render()).contains(LocalDate.ofEpochDay((Long) r.rows().get(0).get(0)).toString());
      // one-shot, with a date literal compared as text and as a date
      assertThat(s.execute("SELECT COUNT(*) AS n FROM d WHERE shipped BETWEEN '2020-06-01' AND DATE '2020-06-30'").rows())
          .containsExactly(List.of((long) expected.get("june").size()));
    }
  }

  @Test
  void dateArithmeticIsPostgresAndMistakesAreNamed() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      long id = SqlFixture.table(5000).keySet().iterator().next();
      Result r = s.execute("SELECT DATE '2024-03-01' - 1 AS a, DATE '2024-03-01' - DATE '2023-03-01' AS b, 3 + DATE '2024-12-30' AS c,"
          + " EXTRACT(dow FROM DATE '2026-12-06') AS dow FROM gen WHERE id = " + id);
      assertThat(r.types()).containsExactly(Type.DATE, Type.BIGINT, Type.DATE, Type.BIGINT);
      assertThat(r.rows()).containsExactly(List.of(LocalDate.parse("2024-02-29").toEpochDay(), 366L,
          LocalDate.parse("2025-01-02").toEpochDay(), 0L));
      // date + interval is a TIMESTAMP (PostgreSQL's), compared with a DATE as its midnight
      assertThat(s.execute("SELECT id FROM gen WHERE id = " + id + " AND DATE '2024-01-31' + INTERVAL '1' MONTH = DATE '2024-02-29'"
          + " AND DATE '2024-01-01' < TIMESTAMP '2024-01-01 00:00:01' AND DATE '2024-01-01' >= TIMESTAMP '2024-01-01 00:00:00'").rows())
          .containsExactly(List.of(id));
      assertThatThrownBy(() -> s.execute("SELECT DATE '2024-01-01' + DATE '2024-01-01' AS x FROM gen"))
          .hasMessageContaining("Cannot apply '+' to DATE and DATE");
      assertThatThrownBy(() -> s.execute("SELECT DATE '2024-01-01' * 2 AS x FROM gen")).hasMessageContaining("Cannot apply '*' to DATE and BIGINT");
      assertThatThrownBy(() -> s.execute("SELECT SUM(DATE '2024-01-01' + amount) AS x FROM gen")).hasMessageContaining("DATE");
    }
  }
}
