package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Random WHERE clauses and projections, planned from SQL, against a naive evaluation over the generator's table. */
class SqlPropertyTest {
  static final Map<Long, Row> TABLE = SqlFixture.table(5000);
  static final String[] COLS = {"id", "category", "amount"};

  /** A predicate as SQL text and as a Java function over (id, category, amount). */
  record Pred(String sql, Predicate<Row> test) {
    @Override
    public String toString() {
      return sql;
    }
  }

  static boolean cmp(String op, long a, long b) {
    return switch (op) {
      case "=" -> a == b;
      case "<>" -> a != b;
      case "<" -> a < b;
      case "<=" -> a <= b;
      case ">" -> a > b;
      default -> a >= b;
    };
  }

  static Arbitrary<Pred> atom() {
    Arbitrary<Integer> col = Arbitraries.integers().between(0, 2);
    Arbitrary<String> op = Arbitraries.of("=", "<>", "<", "<=", ">", ">=");
    Arbitrary<Long> k = Arbitraries.longs().between(-5, 1000);
    Arbitrary<Pred> simple = Combinators.combine(col, op, k).as((c, o, v) ->
        new Pred(COLS[c] + " " + o + " " + v, r -> cmp(o, r.getLong(c), v)));
    Arbitrary<Pred> sum = Combinators.combine(col, col, op, k).as((a, b, o, v) ->
        new Pred("(" + COLS[a] + " + " + COLS[b] + ") " + o + " " + v, r -> cmp(o, r.getLong(a) + r.getLong(b), v)));
    Arbitrary<Pred> mod = Combinators.combine(col, Arbitraries.longs().between(1, 7), Arbitraries.longs().between(0, 6)).as((c, m, v) ->
        new Pred(COLS[c] + " % " + m + " = " + v, r -> r.getLong(c) % m == v));
    return Arbitraries.oneOf(simple, sum, mod);
  }

  static Arbitrary<Pred> pred(int depth) {
    if (depth == 0) {
      return atom();
    }
    Arbitrary<Pred> sub = pred(depth - 1);
    return Arbitraries.oneOf(
        atom(),
        Combinators.combine(sub, sub).as((a, b) -> new Pred("(" + a.sql + " AND " + b.sql + ")", a.test.and(b.test))),
        Combinators.combine(sub, sub).as((a, b) -> new Pred("(" + a.sql + " OR " + b.sql + ")", a.test.or(b.test))),
        // parenthesized: JSqlParser 5.3 cannot parse three NOTs in a row
        sub.map(a -> new Pred("NOT (" + a.sql + ")", a.test.negate())));
  }

  @Provide
  Arbitrary<Pred> predicates() {
    return pred(3);
  }

  /** Regression: JSqlParser parses "NOT NOT a = 1" as NOT ((NOT a) = 1); SQL means NOT (NOT (a = 1)). */
  @Example
  void doubleNotBindsLooserThanComparison() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen WHERE NOT NOT id % 7 = 0 AND NOT id + 1 > 100");
      e.tickUntilCaughtUp(100);
      assertThat(e.peek("v")).containsExactlyElementsOf(TABLE.values().stream()
          .filter(r -> r.getLong(0) % 7 == 0 && r.getLong(0) + 1 <= 100).map(r -> Row.of(r.getLong(0))).toList());
    }
  }

  @Property(tries = 15)
  void filterAndProjectMatchOracle(@ForAll("predicates") Pred where, @ForAll @IntRange(min = -3, max = 3) int mul,
      @ForAll @IntRange(min = 1, max = 3) int workers) {
    try (Engine e = SqlFixture.engine(workers)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW v AS SELECT id, amount * " + mul + " - category AS x FROM gen WHERE " + where.sql);
      s.execute("CREATE MATERIALIZED VIEW g AS SELECT category, COUNT(*) AS n, SUM(amount) AS total, MIN(id) AS lo "
          + "FROM gen WHERE " + where.sql + " GROUP BY category");
      e.tickUntilCaughtUp(100);
      List<Row> rows = TABLE.values().stream().filter(where.test).toList();
      assertThat(e.peek("v")).as(where.sql).containsExactlyElementsOf(
          rows.stream().map(r -> Row.of(r.getLong(0), r.getLong(2) * mul - r.getLong(1))).sorted().toList());
      Map<Long, long[]> groups = new TreeMap<>();
      for (Row r : rows) {
        long[] acc = groups.computeIfAbsent(r.getLong(1), c -> new long[] {0, 0, Long.MAX_VALUE});
        acc[0]++;
        acc[1] += r.getLong(2);
        acc[2] = Math.min(acc[2], r.getLong(0));
      }
      List<Row> expected = new ArrayList<>();
      groups.forEach((c, a) -> expected.add(Row.of(c, a[0], a[1], a[2])));
      assertThat(e.peek("g")).as(where.sql).containsExactlyElementsOf(expected);
    }
  }
}
