package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.runtime.Engine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every piece of work a statement starts is bounded: nesting is refused before parsing, parsing
 * takes time about linear in the text (JSqlParser 5.3 took ~10 s at 11 nested parentheses and never
 * returned at 64), a cancel or a timeout stops a parse and a scan, and a read of a view created a
 * moment ago waits until the view is computed instead of answering it empty.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES) // each test measured up to 8 s; the tighter per-method limits stand
class StatementBudgetTest {

  /** A SELECT whose one expression is nested {@code depth} deep (built in linear time: 100,000 levels are 1-2 MB). */
  static String nested(String kind, int depth) {
    StringBuilder sb = new StringBuilder("SELECT ");
    for (int i = 0; i < depth; i++) {
      sb.append(switch (kind) {
        case "paren" -> "(";
        case "func" -> "abs(";
        case "case" -> "CASE WHEN amount > " + i + " THEN ";
        case "mixed" -> i % 2 == 0 ? "(CASE WHEN (" : "-(";
        default -> throw new IllegalArgumentException(kind);
      });
    }
    sb.append("amount");
    for (int i = depth - 1; i >= 0; i--) {
      sb.append(switch (kind) {
        case "paren" -> " + 1)";
        case "func" -> ")";
        case "case" -> " ELSE 0 END";
        default -> i % 2 == 0 ? ") > 1 THEN 1 ELSE 2 END)" : ")";
      });
    }
    return sb.append(" AS x FROM gen WHERE id = 1").toString();
  }

  @ParameterizedTest
  @ValueSource(strings = {"paren", "func", "case"})
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void nestingUpToTheLimitParsesQuickly(String kind) {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      // the deepest statement allowed, of each shape: every one answers, each within the budget
      String sql = nested(kind, SqlSession.MAX_NESTING - 2);
      long t0 = System.nanoTime();
      try {
        assertThat(s.execute(sql, StatementBudget.of(Duration.ofSeconds(5))).columns()).containsExactly("x");
      } catch (StatementCanceledException ex) {
        throw ex;
      } catch (SqlException ex) {
        // parsed: the planner refuses a function or CASE it does not support yet, naming it
        assertThat(ex).hasMessageContaining("unsupported").hasMessageNotContaining("syntax error");
      }
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(ms).as("parse and plan of %s nested %d deep (JSqlParser 5.3: never returned)", kind, SqlSession.MAX_NESTING - 2)
          .isLessThan(5_000);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {65, 100, 1_000, 100_000})
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void deeperNestingIsRefusedBeforeParsing(int depth) {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      for (String kind : List.of("paren", "case", "mixed")) {
        String sql = nested(kind, depth);
        assertThatThrownBy(() -> s.execute(sql)).isInstanceOf(SqlException.class)
            .hasMessageContaining("nested more than 64 levels deep");
      }
    }
  }

  @Test
  void quotesAndCommentsDoNotHideNesting() {
    String deep = "(".repeat(70) + "1" + ")".repeat(70);
    for (String prefix : List.of("SELECT \"a'b\" + ", "SELECT 'it''s' || ", "SELECT /* ' */ ", "SELECT -- '\n ")) {
      assertThatThrownBy(() -> Nesting.check(prefix + deep + " FROM t")).as(prefix).hasMessageContaining("nested more than");
    }
    // and what is inside them does not count
    Nesting.check("SELECT '" + "(".repeat(100) + "', \"" + "(".repeat(100) + "\" /* " + "(".repeat(100) + " */ FROM t -- (((((");
    Nesting.check("SELECT CASE WHEN a THEN 1 END, " + "CASE WHEN a THEN 1 END, ".repeat(200) + "1 FROM t");
  }

  /**
   * Runs {@code body} on a thread with half the default stack (512 KiB), so that what passes
   * here has the other half to spare on a server's threads.
   */
  private static void onHalfAStack(Runnable body) throws Exception {
    Throwable[] thrown = new Throwable[1];
    Thread t = new Thread(null, () -> {
      try {
        body.run();
      } catch (Throwable x) {
        thrown[0] = x;
      }
    }, "half-stack", 512 * 1024);
    t.start();
    t.join();
    if (thrown[0] instanceof Exception ex) {
      throw ex;
    } else if (thrown[0] instanceof Error err) {
      throw err;
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void operatorChainsUpToTheDepthLimitPlanAndComputeExactly() throws Exception {
    // a chain of k operators is k + 1 levels deep: the longest allowed, in a one-shot SELECT, in
    // a view the engine computes tick by tick, in an aggregate's argument and in a filter
    int k = ExpressionDepth.MAX_DEPTH - 1;
    String sum = "amount" + " + amount".repeat(k - 1) + " + 1";
    String and = "amount >= 0" + " AND amount >= 0".repeat(k / 2 - 1);
    // inside SUM( ) two levels more: the function and its argument list
    String inner = "amount" + " + amount".repeat(k - 3) + " + 1";
    java.util.Map<Long, io.cairn.engine.row.Row> table = SqlFixture.table(5000);
    onHalfAStack(() -> {
      try (Engine e = SqlFixture.engine(2)) {
        SqlSession s = SqlFixture.session(e);
        s.execute(SqlFixture.GEN);
        e.tickUntilCaughtUp(1000);
        Result one = s.execute("SELECT id, " + sum + " AS x FROM gen WHERE " + and);
        assertThat(one.rows()).hasSize(table.size());
        for (List<Object> row : one.rows()) {
          long amount = table.get((Long) row.get(0)).getLong(2);
          assertThat(row.get(1)).isEqualTo(k * amount + 1);
        }
        s.execute("CREATE MATERIALIZED VIEW chained AS SELECT category, SUM(" + inner + ") AS total FROM gen WHERE " + and
            + " GROUP BY category");
        e.tickUntilCaughtUp(1000);
        java.util.Map<Long, Long> expected = new java.util.TreeMap<>();
        table.values().forEach(r -> expected.merge(r.getLong(1), (k - 2) * r.getLong(2) + 1, Long::sum));
        java.util.Map<Long, Long> actual = new java.util.TreeMap<>();
        s.execute("SELECT category, total FROM chained").rows().forEach(r -> actual.put((Long) r.get(0), (Long) r.get(1)));
        assertThat(actual).isEqualTo(expected);
      }
    });
  }

  @ParameterizedTest
  @ValueSource(ints = {ExpressionDepth.MAX_DEPTH, 2_000, 50_000})
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void longerOperatorChainsAreRefusedWithoutRunningOutOfStack(int operators) throws Exception {
    // no parentheses, so Nesting lets them through; before ExpressionDepth, 2,000 overflowed the
    // planner's stack (a StackOverflowError out of the engine, answered 54001 by chance)
    onHalfAStack(() -> {
      try (Engine e = SqlFixture.engine(1)) {
        SqlSession s = SqlFixture.session(e);
        s.execute(SqlFixture.GEN);
        for (String sql : List.of(
            "SELECT " + "amount + ".repeat(operators) + "1 AS x FROM gen",
            "SELECT id FROM gen WHERE " + "amount > 0 OR ".repeat(operators) + "amount > 0",
            "CREATE MATERIALIZED VIEW deep AS SELECT category, SUM(" + "amount * ".repeat(operators) + "1) AS t FROM gen GROUP BY category")) {
          assertThatThrownBy(() -> s.execute(sql)).as(sql.substring(0, 40)).isInstanceOf(SqlException.class)
              .hasMessageContaining("nested more than " + ExpressionDepth.MAX_DEPTH + " levels deep");
        }
        assertThat(s.execute("SHOW VIEWS").rows()).isEmpty();
      }
    });
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aCancelStopsAParseInTheMiddle() throws Exception {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      // flat, not nested: 400k terms take JSqlParser seconds, linearly
      String sql = "SELECT " + "amount + ".repeat(400_000) + "1 FROM gen";
      StatementBudget budget = StatementBudget.of(null);
      List<Throwable> thrown = new ArrayList<>();
      long[] freedAt = new long[1];
      Thread t = new Thread(() -> {
        try {
          s.execute(sql, budget);
        } catch (Throwable x) {
          thrown.add(x);
        }
        freedAt[0] = System.nanoTime();
      });
      t.start();
      Thread.sleep(300);
      assertThat(t.isAlive()).as("still parsing when the cancel comes").isTrue();
      long cancelAt = System.nanoTime();
      budget.cancel(StatementCanceledException.USER_REQUEST);
      t.join(10_000);
      assertThat(t.isAlive()).isFalse();
      assertThat(thrown).singleElement().isInstanceOf(StatementCanceledException.class);
      assertThat(thrown.get(0)).hasMessageContaining("canceling statement due to user request");
      assertThat((freedAt[0] - cancelAt) / 1_000_000).as("ms from the cancel to the thread's release").isLessThan(1_000);
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aTimeoutStopsAScanOfALargeView() {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute("CREATE SOURCE big FROM LOAD GENERATOR (keys = 400000, limit = 400000, seed = 1) ENVELOPE UPSERT");
      e.tickUntilCaughtUp(10_000);
      int rows = e.peek("big").size();
      assertThat(rows).isGreaterThan(100_000);
      // a budget already spent: the scan stops at its first check
      assertThatThrownBy(() -> s.execute("SELECT id * 2 AS x FROM big", StatementBudget.of(Duration.ofNanos(1))))
          .isInstanceOf(StatementCanceledException.class).hasMessageContaining("statement timeout");
      // the engine goes on: a tick runs and the data is all there
      e.tick();
      assertThat(s.execute("SELECT id FROM big").rows()).hasSize(rows);
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aSelectRightAfterCreateSeesTheComputedView() {
    try (Engine e = Engine.builder().workers(2).tickPolicy(new io.cairn.engine.runtime.TickPolicy(100_000, Duration.ofMillis(200)))
        .clock(SqlFixture.CLOCK).build()) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      e.start(); // ticks in the background, idle ticks paused as on a serving node
      long groups = SqlFixture.table(5000).values().stream().map(r -> r.getLong(1)).distinct().count();
      for (int i = 0; i < 10; i++) {
        s.execute("CREATE MATERIALIZED VIEW v" + i + " AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
        Result r = s.execute("SELECT * FROM v" + i, StatementBudget.of(Duration.ofSeconds(10)));
        assertThat(r.rows()).as("round %d", i).hasSize((int) groups);
        s.execute("DROP VIEW v" + i);
      }
      e.stop();
    }
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aReadOfAViewStillHydratingSaysHowFarItHasCome() throws Exception {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      // a tick held in the middle: the engine is "ticking" but no tick closes
      java.util.concurrent.CountDownLatch inTick = new java.util.concurrent.CountDownLatch(1);
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      e.start();
      // the view is created while the engine lock is held, and the lock is kept: no tick can compute it
      Thread blocker = new Thread(() -> e.betweenTicks(() -> {
        s.execute("CREATE MATERIALIZED VIEW slow AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
        inTick.countDown();
        try {
          release.await();
        } catch (InterruptedException x) {
          Thread.currentThread().interrupt();
        }
        return null;
      }));
      blocker.start();
      inTick.await();
      try {
        assertThat(e.dataflow("slow").orElseThrow().hydrating()).isTrue();
        assertThatThrownBy(() -> s.execute("SELECT * FROM slow", StatementBudget.of(Duration.ofMillis(300))))
            .isInstanceOf(StatementCanceledException.class).hasMessageContaining("still being computed from its inputs (hydrating)");
      } finally {
        release.countDown();
        blocker.join();
      }
      assertThat(s.execute("SELECT * FROM slow", StatementBudget.of(Duration.ofSeconds(10))).rows()).isNotEmpty();
      e.stop();
    }
  }
}
