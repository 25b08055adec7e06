package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Numeric;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * NUMERIC: exact decimals in columns, group keys, join keys, sums, averages, minima and maxima,
 * and decimal literals that are NUMERIC as in PostgreSQL ({@code 0.06 - 0.01} is exactly {@code
 * 0.05}, where doubles make it 0.049999…), against a BigDecimal oracle over the generator's final
 * table; an upsert stream with deletes read over many ticks, and a restore from a snapshot taken
 * half-way without recomputing a view.
 */
class NumericTypeTest {
  static final List<String> VIEWS = List.of(
      "CREATE MATERIALIZED VIEW m AS SELECT id, category, amount * 0.01 AS price, amount * 0.07 - 0.05 AS disc FROM gen",
      "CREATE MATERIALIZED VIEW rev AS SELECT category, SUM(price) AS total, AVG(price) AS mean, MIN(disc) AS lo, MAX(price) AS hi,"
          + " COUNT(*) AS n FROM m GROUP BY category",
      "CREATE MATERIALIZED VIEW band AS SELECT id, price FROM m WHERE price BETWEEN 1.05 - 0.05 AND 1.99 + 0.01",
      "CREATE MATERIALIZED VIEW by_price AS SELECT price, COUNT(*) AS n FROM m GROUP BY price",
      "CREATE MATERIALIZED VIEW same_price AS SELECT a.id AS a, b.id AS b FROM m a JOIN m b ON a.price = b.price WHERE a.id < b.id");

  static BigDecimal d(String s) {
    return new BigDecimal(s);
  }

  /** The views' rows, with BigDecimal over the generator's table. */
  static Map<String, List<Row>> oracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    List<Row> m = new ArrayList<>();
    Map<Long, BigDecimal[]> rev = new TreeMap<>();
    Map<Long, Long> revN = new TreeMap<>();
    List<Row> band = new ArrayList<>();
    Map<BigDecimal, Long> byPrice = new TreeMap<>();
    gen.forEach((id, r) -> {
      long cat = r.getLong(1);
      BigDecimal price = Numeric.of(BigDecimal.valueOf(r.getLong(2)).multiply(d("0.01")));
      BigDecimal disc = Numeric.of(BigDecimal.valueOf(r.getLong(2)).multiply(d("0.07")).subtract(d("0.05")));
      m.add(Row.of(id, cat, price, disc));
      rev.merge(cat, new BigDecimal[] {price, disc, price}, (a, b) -> new BigDecimal[] {a[0].add(b[0]), a[1].min(b[1]), a[2].max(b[2])});
      revN.merge(cat, 1L, Long::sum);
      if (price.compareTo(d("1.00")) >= 0 && price.compareTo(d("2.00")) <= 0) {
        band.add(Row.of(id, price));
      }
      byPrice.merge(price, 1L, Long::sum);
    });
    List<Row> same = new ArrayList<>();
    for (Row a : m) {
      for (Row b : m) {
        if (a.getLong(0) < b.getLong(0) && a.get(2).equals(b.get(2))) {
          same.add(Row.of(a.get(0), b.get(0)));
        }
      }
    }
    Map<String, List<Row>> out = new TreeMap<>();
    out.put("m", m);
    List<Row> revRows = new ArrayList<>();
    rev.forEach((c, v) -> revRows.add(Row.of(c, Numeric.of(v[0]),
        Numeric.of(v[0].divide(BigDecimal.valueOf(revN.get(c)), Numeric.MAX_SCALE, RoundingMode.HALF_UP)), Numeric.of(v[1]), Numeric.of(v[2]),
        revN.get(c))));
    out.put("rev", revRows);
    out.put("band", band);
    out.put("by_price", byPrice.entrySet().stream().map(e -> Row.of(e.getKey(), e.getValue())).toList());
    out.put("same_price", same);
    out.replaceAll((k, rows) -> rows.stream().sorted(Row::compareTo).toList());
    return out;
  }

  @Test
  void numericColumnsEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    assertThat(expected.get("band")).isNotEmpty();
    assertThat(expected.get("same_price")).isNotEmpty();
    // averages that do not divide evenly: the 18-decimal rounding is exercised
    assertThat(expected.get("rev")).anyMatch(r -> ((BigDecimal) r.get(2)).scale() == Numeric.MAX_SCALE);
    List<String> statements = new java.util.ArrayList<>(List.of(SqlFixture.GEN));
    statements.addAll(VIEWS);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);
    try (Engine a = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(a);
      statements.forEach(s::execute);
      a.tickUntilCaughtUp(1000);
      Result r = s.execute("SELECT category, total, mean FROM rev ORDER BY category LIMIT 1");
      assertThat(r.types()).containsExactly(Type.BIGINT, Type.NUMERIC, Type.NUMERIC);
      assertThat(r.render()).contains(((BigDecimal) expected.get("rev").get(0).get(2)).toPlainString());
    }
  }

  @Test
  void decimalLiteralsAreExactAndMixedArithmeticFollowsPostgres() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      long id = SqlFixture.table(5000).keySet().iterator().next();
      // exact where doubles are not: 0.06 - 0.01 = 0.05, 0.1 + 0.2 = 0.3
      assertThat(s.execute("SELECT id FROM gen WHERE id = " + id + " AND 0.06 - 0.01 = 0.05 AND 0.1 + 0.2 = 0.3").rows())
          .containsExactly(List.of(id));
      Result r = s.execute("SELECT 1.50 AS a, 2 + 0.5 AS b, 1.0 / 3 AS c, 1.5 * 2e0 AS d, -0.25 AS e, 7 % 2.5 AS f FROM gen WHERE id = " + id);
      assertThat(r.types()).containsExactly(Type.NUMERIC, Type.NUMERIC, Type.NUMERIC, Type.DOUBLE, Type.NUMERIC, Type.NUMERIC);
      assertThat(r.rows()).containsExactly(List.of(d("1.5"), d("2.5"), d("0.333333333333333333"), 3.0, d("-0.25"), d("2.0")));
      // a text literal compared with a NUMERIC is read as one
      assertThat(s.execute("SELECT COUNT(*) AS n FROM gen WHERE id = " + id + " AND 2.5 = '2.50'").rows()).containsExactly(List.of(1L));
      assertThatThrownBy(() -> s.execute("SELECT 123456789012345678901.5 AS x FROM gen"))
          .hasMessageContaining("out of range");
      assertThatThrownBy(() -> s.execute("SELECT 1.5 / 0 AS x FROM gen WHERE id = " + id)).hasMessageContaining("division by zero");
    }
  }
}
