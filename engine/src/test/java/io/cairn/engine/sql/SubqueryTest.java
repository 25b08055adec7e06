package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * IN (subquery), [NOT] EXISTS (correlated subquery) and a comparison with a scalar aggregate
 * subquery in WHERE (COUNT included: 0 over no rows), decorrelated into semi-, anti- and constant-key joins: in views maintained over upserts and deletes of both sources, and in queries, against
 * the same test in Java over the final tables.
 */
class SubqueryTest {
  @Test
  void semiAndAntiJoinsEqualTheOracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, Row> side = OuterJoinTest.side();
    Predicate<Row> inSide = r -> side.containsKey(r.getLong(1));
    Predicate<Row> bigSide = r -> side.containsKey(r.getLong(1)) && side.get(r.getLong(1)).getLong(2) > 500;
    Map<String, Predicate<Row>> cases = new java.util.LinkedHashMap<>();
    cases.put("category IN (SELECT id FROM side)", inSide);
    cases.put("category IN (SELECT id FROM side WHERE amount > 500) AND amount < 700", bigSide.and(r -> r.getLong(2) < 700));
    cases.put("EXISTS (SELECT * FROM side WHERE side.id = gen.category AND side.amount > 500)", bigSide);
    cases.put("NOT EXISTS (SELECT 1 FROM side s WHERE gen.category = s.id AND s.amount > 500)", bigSide.negate());
    cases.put("amount > 100 AND NOT EXISTS (SELECT 1 FROM side WHERE side.id = gen.category)", inSide.negate().and(r -> r.getLong(2) > 100));
    double avg = gen.values().stream().mapToLong(r -> r.getLong(2)).average().orElseThrow();
    long maxSide = side.values().stream().mapToLong(r -> r.getLong(2)).max().orElseThrow();
    cases.put("amount > (SELECT AVG(amount) FROM gen)", r -> r.getLong(2) > avg);
    cases.put("(SELECT MAX(amount) FROM side WHERE id < 100) <= amount + 300", r -> maxSide <= r.getLong(2) + 300);
    // COUNT counts 0 over no rows: side's categories are 0-2, gen's 0-9
    Map<Long, Long> perCategory = new java.util.HashMap<>();
    Map<Long, Long> bigPerCategory = new java.util.HashMap<>();
    side.values().forEach(r -> {
      perCategory.merge(r.getLong(1), 1L, Long::sum);
      if (r.getLong(2) > 300) {
        bigPerCategory.merge(r.getLong(1), 1L, Long::sum);
      }
    });
    long bigSide500 = side.values().stream().filter(r -> r.getLong(2) > 500).count();
    cases.put("(SELECT COUNT(*) FROM side WHERE side.category = gen.category) = 0",
        r -> perCategory.getOrDefault(r.getLong(1), 0L) == 0);
    cases.put("(SELECT COUNT(*) FROM side WHERE side.category = gen.category) >= 3",
        r -> perCategory.getOrDefault(r.getLong(1), 0L) >= 3);
    cases.put("amount / 200 > (SELECT COUNT(amount) FROM side WHERE side.category = gen.category AND side.amount > 300)",
        r -> r.getLong(2) / 200 > bigPerCategory.getOrDefault(r.getLong(1), 0L));
    cases.put("(SELECT COUNT(*) FROM side WHERE amount > 500) < amount / 100", r -> bigSide500 < r.getLong(2) / 100);
    // inside arithmetic: uncorrelated, correlated, and a correlated COUNT that is 0 over no rows
    cases.put("amount > 1.5 * (SELECT AVG(amount) FROM gen) - 100", r -> r.getLong(2) > 1.5 * avg - 100);
    Map<Long, Long> maxPerCategory = new java.util.HashMap<>();
    side.values().forEach(r -> maxPerCategory.merge(r.getLong(1), r.getLong(2), Math::max));
    cases.put("amount + 50 < -(-(SELECT MAX(amount) FROM side WHERE side.category = gen.category)) / 2",
        r -> maxPerCategory.containsKey(r.getLong(1)) && r.getLong(2) + 50 < maxPerCategory.get(r.getLong(1)) / 2);
    cases.put("2 * (SELECT COUNT(*) FROM side WHERE side.category = gen.category) + 1 > amount / 100",
        r -> 2 * perCategory.getOrDefault(r.getLong(1), 0L) + 1 > r.getLong(2) / 100);
    for (Map.Entry<String, Predicate<Row>> c : cases.entrySet()) {
      assertThat(gen.values()).as("some rows pass and some do not: %s (side per category %s)", c.getKey(), perCategory)
          .anyMatch(c.getValue()).anyMatch(c.getValue().negate());
    }
    for (int workers = 1; workers <= 2; workers++) {
      try (Engine e = SqlFixture.engine(workers)) {
        SqlSession s = SqlFixture.session(e);
        s.execute(SqlFixture.GEN);
        s.execute(OuterJoinTest.SIDE);
        int v = 0;
        for (String w : cases.keySet()) {
          s.execute("CREATE MATERIALIZED VIEW q" + v++ + " AS SELECT id, amount FROM gen WHERE " + w);
        }
        e.tickUntilCaughtUp(1000);
        v = 0;
        for (Map.Entry<String, Predicate<Row>> c : cases.entrySet()) {
          List<List<Object>> expected = gen.values().stream().filter(c.getValue())
              .map(r -> List.<Object>of(r.getLong(0), r.getLong(2))).toList();
          assertThat(s.execute("SELECT * FROM q" + v++).rows()).as("view: " + c.getKey()).isEqualTo(expected);
          assertThat(s.execute("SELECT id, amount FROM gen WHERE " + c.getKey()).rows()).as("query: " + c.getKey()).isEqualTo(expected);
        }
      }
    }
  }

  /** A semi- or anti-join reads its input twice (in the join and beside it): the input's operators are built once. */
  @Test
  void anInputReadTwiceIsBuiltOnce() {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute(OuterJoinTest.SIDE);
      s.execute("CREATE MATERIALIZED VIEW twice AS SELECT id FROM gen WHERE amount > 10 AND NOT EXISTS (SELECT * FROM side WHERE side.id = gen.category)"
          + " AND EXISTS (SELECT * FROM side WHERE side.id = gen.id)");
      List<String> ops = e.dataflow("twice").orElseThrow().operators().stream().map(io.cairn.engine.dataflow.Operator::describe).toList();
      assertThat(ops.stream().filter(d -> d.equals("Get gen"))).as("%s", ops).hasSize(1);
      assertThat(ops.stream().filter(d -> d.equals("Get side"))).as("%s", ops).hasSize(1);
    }
  }

  @Test
  void subqueriesItCannotDecorrelateAreRefusedNamingWhy() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute(OuterJoinTest.SIDE);
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE EXISTS (SELECT 1 FROM side WHERE side.amount > 5)"))
          .hasMessageContaining("EXISTS needs its WHERE to equate a column of the subquery with a column of the outer query");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > (SELECT COUNT(*) + 1 FROM side WHERE side.category = gen.category)"))
          .hasMessageContaining("in a correlated scalar subquery COUNT must stand alone ('COUNT(*) + 1')");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > (SELECT COALESCE(MAX(amount), COUNT(*)) FROM side"
          + " WHERE side.category = gen.category)"))
          .hasMessageContaining("a scalar subquery must be one COUNT, SUM, AVG, MIN or MAX");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > (SELECT MAX(amount) + COUNT(*) FROM side"
          + " WHERE side.category = gen.category)"))
          .hasMessageContaining("in a correlated scalar subquery COUNT must stand alone");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > (SELECT MAX(amount) FROM side WHERE side.id > gen.category)"))
          .hasMessageContaining("a scalar subquery must be uncorrelated or correlated by equalities");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > (SELECT MAX(amount) FROM side WHERE side.id = gen.category"
          + " AND side.amount > gen.amount)"))
          .hasMessageContaining("a correlated scalar subquery may relate its columns to the outer query's by equalities only");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > (SELECT MAX(amount) FROM side) + (SELECT MIN(amount) FROM side)"))
          .hasMessageContaining("a comparison with 2 scalar subqueries");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount > COALESCE((SELECT MAX(amount) FROM side WHERE id > 9000), 0)"))
          .hasMessageContaining("unsupported");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE 'x' = 2 * (SELECT MAX(amount) FROM side)"))
          .hasMessageContaining("type mismatch");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE category IN (SELECT id, amount FROM side)"))
          .hasMessageContaining("the subquery of IN must return one column, not 2");
    }
  }
}
