package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * An aggregate without GROUP BY answers one row, as SQL's does, also over no rows: COUNT 0 and the
 * other aggregates NULL — for a view over rows that never come, over rows that come and all leave,
 * and over rows that stay; across a restore; and in a one-shot query (a BI tool's first
 * {@code SELECT count(*)} on an empty table).
 */
class GlobalAggregateTest {
  @Test
  void noRowsIsOneRowOfCountZeroAndNulls() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    // a key that was written and then deleted, and one that stays
    var settings = new LoadGeneratorConnector.Settings(200, 10, 7, 10, 5000, 0);
    long gone = -1;
    for (long i = 0; i < 5000 && gone < 0; i++) {
      long id = LoadGeneratorConnector.recordAt(settings, i).id();
      if (!gen.containsKey(id)) {
        gone = id;
      }
    }
    assertThat(gone).as("a key of the stream ends deleted").isNotNegative();
    long kept = gen.keySet().iterator().next();
    String agg = "SELECT COUNT(*) AS n, SUM(amount) AS s, MAX(amount) AS m, AVG(amount) AS a FROM gen WHERE ";
    List<String> statements = List.of(SqlFixture.GEN,
        "CREATE MATERIALIZED VIEW never AS " + agg + "amount < 0",
        "CREATE MATERIALIZED VIEW left_all AS " + agg + "id = " + gone,
        "CREATE MATERIALIZED VIEW stays AS " + agg + "id = " + kept,
        "CREATE MATERIALIZED VIEW having_none AS SELECT COUNT(*) AS n FROM gen WHERE amount < 0 HAVING COUNT(*) > 0");
    Row none = Row.wrap(new Object[] {0L, null, null, null});
    long amount = gen.get(kept).getLong(2);
    Map<String, List<Row>> expected = new TreeMap<>();
    expected.put("never", List.of(none));
    expected.put("left_all", List.of(none));
    expected.put("stays", List.of(Row.wrap(new Object[] {1L, amount, amount, io.cairn.engine.row.Numeric.of(amount)})));
    expected.put("having_none", List.of());
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);

    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      assertThat(s.execute("SELECT COUNT(*) FROM gen WHERE amount < 0").rows()).isEqualTo(List.of(List.of(0L)));
      assertThat(s.execute("SELECT COUNT(*), SUM(amount) FROM gen WHERE amount < 0").rows())
          .isEqualTo(List.of(new ArrayList<>(Arrays.asList(0L, null))));
    }
  }
}
