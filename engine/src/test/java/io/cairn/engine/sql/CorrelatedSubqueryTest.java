package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * The subqueries TPC-H needs beyond plain semi-joins, decorrelated in views and checked against
 * predicates over the final tables (upserts and deletes of both sources over many ticks, and a
 * restore from a snapshot taken half-way): scalar aggregates correlated by equalities (Q2, Q17,
 * Q20), EXISTS and NOT EXISTS with a correlated condition other than an equality (Q21), NOT IN
 * with SQL's NULL rules (Q16), and a scalar subquery in HAVING (Q11).
 */
class CorrelatedSubqueryTest {
  @Test
  void correlatedSubqueriesEqualTheOracleAcrossARestore() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, Row> side = OuterJoinTest.side();
    Map<Long, long[]> perCat = new TreeMap<>(); // category -> {count, sum, max}
    for (Row g : gen.values()) {
      perCat.merge(g.getLong(1), new long[] {1, g.getLong(2), g.getLong(2)},
          (a, b) -> new long[] {a[0] + b[0], a[1] + b[1], Math.max(a[2], b[2])});
    }
    Map<Long, long[]> sidePerCat = new TreeMap<>();
    for (Row r : side.values()) {
      sidePerCat.merge(r.getLong(1), new long[] {1, r.getLong(2)}, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
    }
    boolean sideHasBig = side.values().stream().anyMatch(r -> r.getLong(2) > 990);
    Map<String, Predicate<Row>> cases = new LinkedHashMap<>();
    // above the average of its category: amount * count > sum
    cases.put("amount > (SELECT AVG(amount) FROM gen AS g2 WHERE g2.category = gen.category)", r -> {
      long[] c = perCat.get(r.getLong(1));
      return r.getLong(2) * c[0] > c[1];
    });
    // below half the average of side's rows of the same category; none where side has no such rows (NULL)
    cases.put("amount < (SELECT 0.5 * AVG(side.amount) FROM side WHERE side.category = gen.category)", r -> {
      long[] c = sidePerCat.get(r.getLong(1));
      return c != null && BigDecimal.valueOf(r.getLong(2) * c[0] * 2).compareTo(BigDecimal.valueOf(c[1])) < 0;
    });
    cases.put("amount = (SELECT MAX(amount) FROM gen g2 WHERE gen.category = g2.category)", r -> r.getLong(2) == perCat.get(r.getLong(1))[2]);
    Predicate<Row> beaten = r -> gen.values().stream().anyMatch(o -> o.getLong(1) == r.getLong(1) && o.getLong(0) != r.getLong(0)
        && o.getLong(2) > r.getLong(2));
    cases.put("EXISTS (SELECT * FROM gen g2 WHERE g2.category = gen.category AND g2.id <> gen.id AND g2.amount > gen.amount)", beaten);
    cases.put("NOT EXISTS (SELECT * FROM gen g2 WHERE g2.category = gen.category AND g2.id <> gen.id AND g2.amount > gen.amount)",
        beaten.negate());
    cases.put("category NOT IN (SELECT id FROM side)", r -> !side.containsKey(r.getLong(1)));
    // a NULL among the values: no row is NOT IN them while it is there
    cases.put("category NOT IN (SELECT CASE WHEN amount > 990 THEN NULL ELSE id END FROM side)",
        r -> !sideHasBig && !side.containsKey(r.getLong(1)));
    // no values at all: every row is NOT IN them
    cases.put("category NOT IN (SELECT id FROM side WHERE amount > 100000)", r -> true);
    for (Map.Entry<String, Predicate<Row>> c : cases.entrySet()) {
      if (!c.getKey().contains("100000") && !c.getKey().contains("CASE")) {
        assertThat(gen.values()).as(c.getKey()).anyMatch(c.getValue()).anyMatch(c.getValue().negate());
      }
    }
    List<String> statements = new ArrayList<>(List.of(SqlFixture.GEN, OuterJoinTest.SIDE));
    Map<String, List<Row>> expected = new TreeMap<>();
    int v = 0;
    for (Map.Entry<String, Predicate<Row>> c : cases.entrySet()) {
      statements.add("CREATE MATERIALIZED VIEW c" + v + " AS SELECT id, amount FROM gen WHERE " + c.getKey());
      expected.put("c" + v++, gen.values().stream().filter(c.getValue()).map(r -> Row.of(r.getLong(0), r.getLong(2)))
          .sorted().collect(java.util.stream.Collectors.toList()));
    }
    // HAVING against a scalar subquery: the categories whose total is above 20 average rows
    statements.add("CREATE MATERIALIZED VIEW h AS SELECT category, SUM(amount) AS total FROM gen GROUP BY category"
        + " HAVING SUM(amount) > (SELECT AVG(amount) * 20 FROM gen) AND COUNT(*) > 1");
    long count = gen.size();
    long sum = gen.values().stream().mapToLong(r -> r.getLong(2)).sum();
    List<Row> h = new ArrayList<>();
    perCat.forEach((cat, c) -> {
      if (c[1] * count > sum * 20 && c[0] > 1) {
        h.add(Row.of(cat, c[1]));
      }
    });
    assertThat(h).isNotEmpty().hasSizeLessThan(perCat.size());
    expected.put("h", h);
    // the same with the subquery inside arithmetic, on the left
    statements.add("CREATE MATERIALIZED VIEW h2 AS SELECT category, SUM(amount) AS total FROM gen GROUP BY category"
        + " HAVING 2 * (SELECT AVG(amount) FROM gen) * 10 < SUM(amount) AND COUNT(*) > 1");
    expected.put("h2", h);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);
  }
}
