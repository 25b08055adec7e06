package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.sink.ChangeFeed;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A view's change feed, against the engine's own contents as the oracle: a reader that starts
 * from the snapshot and adds up every tick's changes holds exactly the view after each tick — no
 * tick skipped, none twice, in order — with retractions (the generator deletes and updates).
 */
class ChangeFeedTest {

  /** Adds {@code c} into {@code state} (row → multiplicity); a multiplicity never goes below zero. */
  private static void apply(Map<Row, Long> state, ChangeFeed.Changes c) {
    for (int i = 0; i < c.size(); i++) {
      long m = state.getOrDefault(c.rows().get(i), 0L) + c.diffs()[i];
      assertThat(m).as("multiplicity of %s after tick %d", c.rows().get(i), c.tick()).isNotNegative();
      if (m == 0) {
        state.remove(c.rows().get(i));
      } else {
        state.put(c.rows().get(i), m);
      }
    }
  }

  private static Map<Row, Long> counted(List<Row> rows) {
    Map<Row, Long> m = new TreeMap<>();
    rows.forEach(r -> m.merge(r, 1L, Long::sum));
    return m;
  }

  @Test
  void aReaderAddingUpEveryTickHoldsTheViewAfterEachTick() throws Exception {
    // 200 records a tick: the generator's 5,000 take 25 ticks
    try (Engine e = Engine.builder().workers(3).tickPolicy(new io.cairn.engine.runtime.TickPolicy(200, java.time.Duration.ofMillis(20)))
        .clock(SqlFixture.CLOCK).build()) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW by_cat AS SELECT category, COUNT(*) AS n, SUM(amount) AS total FROM gen GROUP BY category");
      s.execute("CREATE MATERIALIZED VIEW big AS SELECT id, amount FROM gen WHERE amount > 700");
      for (int i = 0; i < 3; i++) {
        e.catchUpTick(); // some history before the readers come
      }
      try (ChangeFeed.Subscription byCat = e.feed("by_cat").subscribe(true, 1_000_000);
          ChangeFeed.Subscription big = e.feed("big").subscribe(true, 1_000_000);
          ChangeFeed.Subscription gen = e.feed("gen").subscribe(false, 1_000_000)) {
        long start = e.lastClosedTick();
        assertThat(byCat.startTick()).isEqualTo(start);
        Map<Row, Long> cats = new TreeMap<>();
        Map<Row, Long> bigs = new TreeMap<>();
        Map<Row, Long> table = counted(e.peek("gen"));
        ChangeFeed.Changes first = byCat.next(1000);
        assertThat(first.tick()).as("the snapshot is at the start tick").isEqualTo(start);
        apply(cats, first);
        apply(bigs, big.next(1000));
        assertThat(cats).isEqualTo(counted(e.peek("by_cat")));
        int ticks = 0;
        int retracting = 0;
        while (!e.caughtUp() && ticks < 500) {
          long t = e.catchUpTick();
          ticks++;
          ChangeFeed.Changes c = byCat.next(1000);
          assertThat(c.tick()).as("tick order, none skipped").isEqualTo(t);
          for (int i = 1; i < c.size(); i++) {
            assertThat(c.rows().get(i - 1)).as("sorted, consolidated").isLessThan(c.rows().get(i));
          }
          for (long d : c.diffs()) {
            retracting += d < 0 ? 1 : 0;
          }
          apply(cats, c);
          assertThat(cats).as("by_cat after tick %d", t).isEqualTo(counted(e.peek("by_cat")));
          ChangeFeed.Changes b = big.next(1000);
          assertThat(b.tick()).isEqualTo(t);
          apply(bigs, b);
          assertThat(bigs).as("big after tick %d", t).isEqualTo(counted(e.peek("big")));
          ChangeFeed.Changes g = gen.next(1000);
          assertThat(g.tick()).isEqualTo(t);
          apply(table, g);
        }
        assertThat(ticks).as("ticks checked").isGreaterThan(15);
        assertThat(retracting).as("retractions seen").isPositive();
        assertThat(table).as("the source's changes added up from its contents at the start").isEqualTo(counted(e.peek("gen")));
        Map<Long, long[]> oracle = new TreeMap<>();
        SqlFixture.table(5000).values().forEach(r -> {
          long[] a = oracle.computeIfAbsent(r.getLong(1), k -> new long[2]);
          a[0]++;
          a[1] += r.getLong(2);
        });
        List<Row> want = new ArrayList<>();
        oracle.forEach((k, v) -> want.add(Row.of(k, v[0], v[1])));
        assertThat(new ArrayList<>(cats.keySet())).as("against the naive oracle").isEqualTo(want);
        // a tick with no change still comes, empty
        long idle = e.catchUpTick();
        ChangeFeed.Changes none = byCat.next(1000);
        assertThat(none.tick()).isEqualTo(idle);
        assertThat(none.size()).isZero();
      }
    }
  }

  @Test
  void aReaderThatFallsBehindIsEndedAndNothingElseWaits() throws Exception {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      ChangeFeed.Subscription slow = e.feed("gen").subscribe(false, 100);
      ChangeFeed.Subscription keeping = e.feed("gen").subscribe(false, 100);
      int taken = 0;
      for (int i = 0; i < 30 && !e.caughtUp(); i++) {
        e.catchUpTick();
        while (keeping.next(0) != null) {
          taken++;
        }
      }
      assertThat(e.caughtUp()).as("the engine did not wait for the slow reader").isTrue();
      assertThat(taken).isPositive();
      assertThatThrownBy(() -> slow.next(0)).isInstanceOf(ChangeFeed.Ended.class).hasMessageContaining("fell behind")
          .hasMessageContaining("the bound is 100 rows");
      assertThat(e.subscribers("gen")).as("the ended reader is gone; the other stays").isEqualTo(1);
      keeping.close();
      assertThat(e.subscribers("gen")).isZero();
    }
  }

  @Test
  void droppingTheViewEndsItsReaders() throws Exception {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen");
      ChangeFeed.Subscription r = e.feed("v").subscribe(true, 1000);
      s.execute("DROP VIEW v");
      assertThatThrownBy(() -> {
        while (true) {
          r.next(100);
        }
      }).isInstanceOf(ChangeFeed.Ended.class).hasMessageContaining("'v' was dropped");
      assertThatThrownBy(() -> e.feed("v")).hasMessageContaining("no such source or view");
    }
  }
}
