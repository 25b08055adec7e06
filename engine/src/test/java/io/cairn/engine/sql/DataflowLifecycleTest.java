package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.dataflow.Dataflow;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Drop releases what a dataflow holds; a shared arrangement survives its readers; failures stay in their dataflow. */
class DataflowLifecycleTest {

  @Test
  void createAndDropOf100ViewsReturnsToBaseline() throws Exception {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(100); // the source holds all its data: its arrangement no longer grows
      int baseCount = e.arrangementCount();
      long baseBytes = e.metrics().arrangementBytes();
      assertThat(baseCount).isEqualTo(1);
      assertThat(baseBytes).isPositive();

      List<String> kinds = List.of(
          "SELECT category, COUNT(*), MIN(amount), MAX(amount) FROM gen GROUP BY category",
          "SELECT id, amount FROM gen WHERE amount > 200",
          "SELECT DISTINCT category FROM gen",
          "SELECT a.id, b.amount FROM gen a JOIN gen b ON a.category = b.category WHERE a.id < 3");
      for (int i = 0; i < 100; i++) {
        s.execute("CREATE MATERIALIZED VIEW v" + i + " AS " + kinds.get(i % kinds.size()));
      }
      e.tick();
      e.tick();
      assertThat(e.arrangementCount()).isGreaterThan(baseCount + 100);
      assertThat(e.metrics().arrangementBytes()).isGreaterThan(baseBytes * 10);
      List<WeakReference<Dataflow>> dropped = new ArrayList<>();
      for (int i = 0; i < 100; i++) {
        dropped.add(new WeakReference<>(e.dataflow("v" + i).orElseThrow()));
        s.execute("DROP VIEW v" + i);
      }
      assertThat(e.arrangementCount()).isEqualTo(baseCount);
      assertThat(e.metrics().arrangementBytes()).isEqualTo(baseBytes);
      assertThat(e.dataflows()).extracting(Dataflow::name).containsExactly("gen");
      // the dropped dataflows (operators and arrangements) are unreachable: their memory returns
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (dropped.stream().anyMatch(r -> r.get() != null) && System.nanoTime() < deadline) {
        System.gc();
        Thread.sleep(20);
      }
      assertThat(dropped).allSatisfy(r -> assertThat(r.get()).isNull());
      // and the engine keeps working
      e.tickUntilCaughtUp(100);
      assertThat(e.peek("gen")).hasSize(SqlFixture.table(5000).size());
    }
  }

  @Test
  void sharedArrangementSurvivesWhileAReaderRemains() {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW cheap AS SELECT id, category FROM gen WHERE amount < 500");
      s.execute("CREATE MATERIALIZED VIEW per_cat AS SELECT category, COUNT(*) AS n FROM cheap GROUP BY category");
      s.execute("CREATE MATERIALIZED VIEW all_ids AS SELECT id FROM gen");
      e.tick();
      int count = e.arrangementCount();
      // gen is read by cheap and all_ids: dropping one reader leaves gen's arrangement to the other
      s.execute("DROP VIEW all_ids");
      assertThat(e.dataflow("gen")).isPresent();
      // cheap is read by per_cat: it cannot go, and its arrangement stays live
      org.junit.jupiter.api.Assertions.assertThrows(SqlException.class, () -> s.execute("DROP VIEW cheap"));
      assertThat(e.arrangementCount()).isEqualTo(count - 1);
      e.tickUntilCaughtUp(100);
      Map<Long, Row> t = SqlFixture.table(5000);
      List<Row> cheap = t.values().stream().filter(r -> r.getLong(2) < 500).map(r -> Row.of(r.getLong(0), r.getLong(1))).sorted().toList();
      assertThat(e.peek("cheap")).containsExactlyElementsOf(cheap);
      Map<Long, Long> perCat = new java.util.TreeMap<>();
      cheap.forEach(r -> perCat.merge(r.getLong(1), 1L, Long::sum));
      assertThat(e.peek("per_cat")).containsExactlyElementsOf(perCat.entrySet().stream().map(x -> Row.of(x.getKey(), x.getValue())).toList());
      // once the last reader is gone, the arrangement goes too
      s.execute("DROP VIEW per_cat");
      s.execute("DROP VIEW cheap");
      assertThat(e.arrangementCount()).isEqualTo(1);
    }
  }

  @Test
  void failingViewDoesNotStopTheOthers() {
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute("CREATE MATERIALIZED VIEW bad AS SELECT id, amount / (category - 3) AS q FROM gen");
      s.execute("CREATE MATERIALIZED VIEW on_bad AS SELECT COUNT(*) FROM bad");
      s.execute("CREATE MATERIALIZED VIEW good AS SELECT category, COUNT(*) AS n FROM gen GROUP BY category");
      long firstTick = e.tick();
      List<Row> afterOne = e.peek("good");
      assertThat(afterOne).isNotEmpty();
      Result views = s.execute("SHOW VIEWS");
      List<Object> bad = views.rows().stream().filter(r -> r.get(0).equals("bad")).findFirst().orElseThrow();
      assertThat(bad.get(2)).isEqualTo("FAILED");
      assertThat((String) bad.get(3)).contains("division by zero");
      assertThat(views.rows().stream().filter(r -> r.get(0).equals("on_bad")).findFirst().orElseThrow().get(2)).isEqualTo("FAILED");
      assertThat(views.rows().stream().filter(r -> r.get(0).equals("good")).findFirst().orElseThrow().get(2)).isEqualTo("RUNNING");
      // the node keeps ticking and the good view keeps updating
      e.tickUntilCaughtUp(100);
      assertThat(e.lastClosedTick()).isGreaterThan(firstTick);
      List<Row> later = e.peek("good");
      assertThat(later).isNotEqualTo(afterOne);
      Map<Long, Long> oracle = new java.util.TreeMap<>();
      SqlFixture.table(5000).values().forEach(r -> oracle.merge(r.getLong(1), 1L, Long::sum));
      assertThat(later).containsExactlyElementsOf(oracle.entrySet().stream().map(x -> Row.of(x.getKey(), x.getValue())).toList());
      assertThat(s.execute("SHOW SOURCES").rows().get(0).get(4)).isEqualTo("RUNNING");
      // a failed view can be dropped and replaced
      s.execute("DROP VIEW bad CASCADE");
      s.execute("CREATE MATERIALIZED VIEW bad AS SELECT id, amount / (category + 1) AS q FROM gen");
      e.tick();
      assertThat(e.dataflow("bad").orElseThrow().state()).isEqualTo(Dataflow.State.RUNNING);
      assertThat(e.peek("bad")).hasSize(oracle.values().stream().mapToInt(Long::intValue).sum());
    }
  }
}
