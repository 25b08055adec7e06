package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * LEFT, RIGHT and FULL joins in views, against a naive nested-loop oracle over the final tables:
 * both sources are upsert streams with deletes read over many ticks, so every view sees its rows
 * inserted, matched, unmatched and retracted on the way; and a view restored from a snapshot taken
 * half-way ends equal to the oracle without being recomputed.
 */
class OuterJoinTest {
  static final String SIDE = "CREATE SOURCE side FROM LOAD GENERATOR (keys = 15, categories = 3, seed = 11, limit = 300, delete-percent = 30)"
      + " ENVELOPE UPSERT";
  static final String COLS = "SELECT gen.id, gen.category, side.id AS sid, side.amount AS samount FROM gen ";
  static final List<String> VIEWS = List.of(
      "CREATE MATERIALIZED VIEW l AS " + COLS + "LEFT JOIN side ON gen.category = side.id",
      "CREATE MATERIALIZED VIEW r AS " + COLS + "RIGHT OUTER JOIN side ON gen.category = side.id",
      "CREATE MATERIALIZED VIEW f AS " + COLS + "FULL JOIN side ON side.id = gen.category",
      "CREATE MATERIALIZED VIEW lc AS " + COLS + "LEFT JOIN side ON gen.category = side.id AND side.amount > 500",
      "CREATE MATERIALIZED VIEW n AS SELECT gen.category, COUNT(*) AS rows FROM gen LEFT JOIN side ON gen.category = side.id"
          + " WHERE side.id IS NULL GROUP BY gen.category");

  /** The side source's rows (id → (id, category, amount)) after all its records. */
  static Map<Long, Row> side() {
    var s = new LoadGeneratorConnector.Settings(15, 3, 11, 30, 300, 0);
    Map<Long, Row> t = new HashMap<>();
    for (long i = 0; i < 300; i++) {
      var r = LoadGeneratorConnector.recordAt(s, i);
      if (r.row() == null) {
        t.remove(r.id());
      } else {
        t.put(r.id(), r.row());
      }
    }
    return new TreeMap<>(t);
  }

  static Map<String, List<Row>> oracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, Row> side = side();
    List<Row> l = new ArrayList<>();
    List<Row> lc = new ArrayList<>();
    List<Row> unmatchedRight = new ArrayList<>();
    Map<Long, Long> n = new TreeMap<>();
    for (Row g : gen.values()) {
      Row s = side.get(g.getLong(1));
      l.add(s == null ? Row.of(g.getLong(0), g.getLong(1), null, null) : Row.of(g.getLong(0), g.getLong(1), s.getLong(0), s.getLong(2)));
      lc.add(s == null || s.getLong(2) <= 500 ? Row.of(g.getLong(0), g.getLong(1), null, null)
          : Row.of(g.getLong(0), g.getLong(1), s.getLong(0), s.getLong(2)));
      if (s == null) {
        n.merge(g.getLong(1), 1L, Long::sum);
      }
    }
    List<Row> r = new ArrayList<>();
    for (Row s : side.values()) {
      boolean matched = false;
      for (Row g : gen.values()) {
        if (g.getLong(1) == s.getLong(0)) {
          r.add(Row.of(g.getLong(0), g.getLong(1), s.getLong(0), s.getLong(2)));
          matched = true;
        }
      }
      if (!matched) {
        Row pad = Row.of(null, null, s.getLong(0), s.getLong(2));
        r.add(pad);
        unmatchedRight.add(pad);
      }
    }
    List<Row> f = new ArrayList<>(l);
    f.addAll(unmatchedRight);
    List<Row> nRows = new ArrayList<>();
    n.forEach((c, k) -> nRows.add(Row.of(c, k)));
    Map<String, List<Row>> out = new TreeMap<>();
    out.put("l", l);
    out.put("r", r);
    out.put("f", f);
    out.put("lc", lc);
    out.put("n", nRows);
    out.values().forEach(rows -> rows.sort(Row::compareTo));
    return out;
  }

  @Test
  void outerJoinsEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    // the oracle has each kind of row: padded on the left, on the right, and matched
    assertThat(expected.get("l")).anyMatch(x -> x.get(2) == null).anyMatch(x -> x.get(2) != null);
    assertThat(expected.get("r")).anyMatch(x -> x.get(0) == null);
    List<String> statements = new ArrayList<>(List.of(SqlFixture.GEN, SIDE));
    statements.addAll(VIEWS);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);
    try (Engine a = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(a);
      statements.forEach(s::execute);
      a.tickUntilCaughtUp(1000);
      // the same query, one-shot, answers the same
      assertThat(s.execute(COLS + "FULL JOIN side ON side.id = gen.category").rows())
          .isEqualTo(expected.get("f").stream().map(x -> java.util.Arrays.asList(x.toArray())).toList());
    }
  }

  @Test
  void conditionsAnOuterJoinCannotTakeAreRefusedNamingWhy() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute(SIDE);
      assertThatThrownBy(() -> s.execute(COLS + "LEFT JOIN side ON gen.category = side.id AND gen.amount > 5"))
          .hasMessageContaining("in the ON of a LEFT JOIN, a condition other than an equality between the two sides must concern only 'side'");
      assertThatThrownBy(() -> s.execute(COLS + "FULL JOIN side ON gen.category = side.id AND side.amount > 5"))
          .hasMessageContaining("a FULL JOIN takes none");
      assertThatThrownBy(() -> s.execute(COLS + "CROSS JOIN side")).hasMessageContaining("only [INNER | LEFT | RIGHT | FULL [OUTER]] JOIN ... ON");
      // a condition on the left table of a RIGHT join filters that table before the join
      e.tickUntilCaughtUp(1000);
      List<List<Object>> rows = s.execute(COLS + "RIGHT JOIN side ON gen.category = side.id AND gen.id < 0").rows();
      assertThat(rows).hasSize(side().size()).allMatch(x -> x.get(0) == null);
    }
  }
}
