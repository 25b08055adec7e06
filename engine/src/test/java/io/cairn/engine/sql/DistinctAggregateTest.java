package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * COUNT(DISTINCT …) and the like, and aggregates inside CASE or with CASE inside them (TPC-H's
 * {@code SUM(CASE WHEN … THEN 1 ELSE 0 END)}), in views maintained over upserts and deletes and in
 * queries, against the same computation in Java over the generator's final table.
 */
class DistinctAggregateTest {
  @Test
  void distinctAggregatesAndCaseAroundAndInsideAggregatesEqualTheOracle() {
    Map<Long, Row> table = SqlFixture.table(5000);
    Map<Long, Set<Long>> catsPerBucket = new TreeMap<>();
    Map<Long, long[]> perCategory = new TreeMap<>(); // count, rows with amount > 500
    for (Row r : table.values()) {
      catsPerBucket.computeIfAbsent(r.getLong(2) / 100, b -> new HashSet<>()).add(r.getLong(1));
      long[] acc = perCategory.computeIfAbsent(r.getLong(1), c -> new long[2]);
      acc[0]++;
      acc[1] += r.getLong(2) > 500 ? 1 : 0;
    }
    List<List<Object>> distinctCats = new ArrayList<>();
    catsPerBucket.forEach((b, cats) -> distinctCats.add(List.of(b, (long) cats.size(), cats.stream().mapToLong(x -> x).sum())));
    List<List<Object>> sized = new ArrayList<>();
    perCategory.forEach((c, a) -> sized.add(List.of(c, a[0] > 18 ? "many" : "few", a[1])));
    assertThat(sized.stream().map(x -> x.get(1)).distinct()).as("both sizes occur").hasSize(2);
    // the side's ids that some gen row's category matches, counted once each (NULL padding not counted)
    Map<Long, Row> side = OuterJoinTest.side();
    long matched = side.keySet().stream().filter(id -> table.values().stream().anyMatch(r -> r.getLong(1) == id)).count();
    for (int workers = 1; workers <= 2; workers++) {
      try (Engine e = SqlFixture.engine(workers)) {
        SqlSession s = SqlFixture.session(e);
        s.execute(SqlFixture.GEN);
        s.execute(OuterJoinTest.SIDE);
        String dq = "SELECT amount / 100 AS bucket, COUNT(DISTINCT category) AS cats, SUM(DISTINCT category) AS catsum FROM gen"
            + " GROUP BY amount / 100";
        String sq = "SELECT category, CASE WHEN COUNT(*) > 18 THEN 'many' ELSE 'few' END AS size,"
            + " SUM(CASE WHEN amount > 500 THEN 1 ELSE 0 END) AS big FROM gen GROUP BY category";
        String nq = "SELECT COUNT(DISTINCT side.id) AS n FROM gen LEFT JOIN side ON gen.category = side.id";
        s.execute("CREATE MATERIALIZED VIEW d AS " + dq);
        s.execute("CREATE MATERIALIZED VIEW sz AS " + sq);
        s.execute("CREATE MATERIALIZED VIEW nn AS " + nq);
        e.tickUntilCaughtUp(1000);
        assertThat(s.execute("SELECT * FROM d").rows()).isEqualTo(distinctCats);
        assertThat(s.execute(dq).rows()).isEqualTo(distinctCats);
        assertThat(s.execute("SELECT * FROM sz").rows()).isEqualTo(sized);
        assertThat(s.execute(sq).rows()).isEqualTo(sized);
        assertThat(s.execute("SELECT * FROM nn").rows()).containsExactly(List.of(matched));
        assertThat(s.execute(nq).rows()).containsExactly(List.of(matched));
        assertThatThrownBy(() -> s.execute("SELECT category, COUNT(DISTINCT amount), COUNT(*) FROM gen GROUP BY category"))
            .hasMessageContaining("an aggregate with DISTINCT beside other aggregates");
      }
    }
  }
}
