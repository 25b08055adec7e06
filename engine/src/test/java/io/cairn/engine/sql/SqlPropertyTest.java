package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.testkit.Gen;
import io.cairn.engine.testkit.Property;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Random WHERE clauses under projections, grouping, a top-k window, an aggregate without GROUP BY
 * and a join whose WHERE the planner pushes below it, planned from SQL, against a naive evaluation
 * over the generator's table (read over several ticks, so every view is maintained, not only
 * hydrated).
 */
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

  static Gen<Pred> atom() {
    Gen<Integer> col = Gen.ints(0, 2);
    Gen<String> op = Gen.of("=", "<>", "<", "<=", ">", ">=");
    Gen<Long> k = Gen.longs(-5, 1000);
    Gen<Pred> simple = (r, size) -> {
      int c = col.next(r, size);
      String o = op.next(r, size);
      long v = k.next(r, size);
      return new Pred(COLS[c] + " " + o + " " + v, row -> cmp(o, row.getLong(c), v));
    };
    Gen<Pred> sum = (r, size) -> {
      int a = col.next(r, size);
      int b = col.next(r, size);
      String o = op.next(r, size);
      long v = k.next(r, size);
      return new Pred("(" + COLS[a] + " + " + COLS[b] + ") " + o + " " + v, row -> cmp(o, row.getLong(a) + row.getLong(b), v));
    };
    Gen<Long> mods = Gen.longs(1, 7);
    Gen<Long> rems = Gen.longs(0, 6);
    Gen<Pred> mod = (r, size) -> {
      int c = col.next(r, size);
      long m = mods.next(r, size);
      long v = rems.next(r, size);
      return new Pred(COLS[c] + " % " + m + " = " + v, row -> row.getLong(c) % m == v);
    };
    return Gen.oneOf(simple, sum, mod);
  }

  static Gen<Pred> pred(int depth) {
    if (depth == 0) {
      return atom();
    }
    Gen<Pred> sub = pred(depth - 1);
    Gen<Pred> and = (r, size) -> {
      Pred a = sub.next(r, size);
      Pred b = sub.next(r, size);
      return new Pred("(" + a.sql + " AND " + b.sql + ")", a.test.and(b.test));
    };
    Gen<Pred> or = (r, size) -> {
      Pred a = sub.next(r, size);
      Pred b = sub.next(r, size);
      return new Pred("(" + a.sql + " OR " + b.sql + ")", a.test.or(b.test));
    };
    return Gen.oneOf(
        atom(),
        and,
        or,
        // parenthesized: JSqlParser 5.3 cannot parse three NOTs in a row
        sub.map(a -> new Pred("NOT (" + a.sql + ")", a.test.negate())));
  }

  static final Gen<Pred> PREDICATES = pred(3);

  /** Regression: JSqlParser parses "NOT NOT a = 1" as NOT ((NOT a) = 1); SQL means NOT (NOT (a = 1)). */
  @Test
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

  record Case(Pred where, int mul, int workers, int limit, int offset) {}

  @Test
  void filterAndProjectMatchOracle() {
    Gen<Integer> muls = Gen.ints(-3, 3);
    Gen<Integer> workerCounts = Gen.ints(1, 3);
    Gen<Integer> limits = Gen.ints(0, 30);
    Gen<Integer> offsets = Gen.ints(0, 5);
    Gen<Case> gen = (r, size) -> new Case(PREDICATES.next(r, size), muls.next(r, size), workerCounts.next(r, size),
        limits.next(r, size), offsets.next(r, size));
    Property.tries(15).forAll(gen, c -> filterAndProjectMatchOracle(c));
  }

  private static void filterAndProjectMatchOracle(Case k) {
    Pred where = k.where();
    int mul = k.mul();
    int workers = k.workers();
    try (Engine e = SqlFixture.engine(workers)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW v AS SELECT id, amount * " + mul + " - category AS x FROM gen WHERE " + where.sql);
      s.execute("CREATE MATERIALIZED VIEW g AS SELECT category, COUNT(*) AS n, SUM(amount) AS total, MIN(id) AS lo "
          + "FROM gen WHERE " + where.sql + " GROUP BY category");
      s.execute("CREATE MATERIALIZED VIEW t AS SELECT id, amount FROM gen WHERE " + where.sql + " ORDER BY amount DESC, id LIMIT "
          + k.limit() + " OFFSET " + k.offset());
      s.execute("CREATE MATERIALIZED VIEW total AS SELECT COUNT(*) AS n, SUM(amount) AS s FROM gen WHERE " + where.sql);
      s.execute("CREATE MATERIALIZED VIEW j AS SELECT id, amount2 FROM gen JOIN (SELECT id AS id2, amount AS amount2 FROM gen) AS y"
          + " ON id = id2 WHERE " + where.sql);
      e.tickUntilCaughtUp(100);
      List<Row> rows = TABLE.values().stream().filter(where.test).toList();
      List<Row> top = rows.stream().sorted(java.util.Comparator.comparingLong((Row r) -> -r.getLong(2)).thenComparingLong(r -> r.getLong(0)))
          .skip(k.offset()).limit(k.limit()).map(r -> Row.of(r.getLong(0), r.getLong(2))).sorted().toList();
      assertThat(e.peek("t")).as("top-k of " + where.sql).containsExactlyElementsOf(top);
      long sum = rows.stream().mapToLong(r -> r.getLong(2)).sum();
      assertThat(e.peek("total")).as("total of " + where.sql)
          .containsExactly(Row.wrap(new Object[] {(long) rows.size(), rows.isEmpty() ? null : sum}));
      assertThat(e.peek("j")).as("join under " + where.sql)
          .containsExactlyElementsOf(rows.stream().map(r -> Row.of(r.getLong(0), r.getLong(2))).sorted().toList());
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
