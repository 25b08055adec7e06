package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * UNION [ALL], INTERSECT and EXCEPT in views and queries, against a naive evaluation over the final
 * tables of two upsert sources with deletes (read over many ticks, so rows come and go); one side
 * holds NULLs (the padding of a LEFT JOIN), which a set operation treats as equal.
 */
class SetOperationTest {
  /** The categories of gen's rows, with the side's id matched by a LEFT JOIN (NULL where none): x. */
  static final String XS = "SELECT side.id AS x FROM gen LEFT JOIN side ON gen.category = side.id";

  @Test
  void setOperationsEqualTheOracleInViewsAndQueries() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, Row> side = OuterJoinTest.side();
    List<Long> cats = gen.values().stream().map(r -> r.getLong(1)).toList();
    List<Long> ids = side.values().stream().map(r -> r.getLong(0)).toList();
    List<Long> xs = gen.values().stream().map(r -> side.containsKey(r.getLong(1)) ? r.getLong(1) : null).toList();
    assertThat(xs).as("the oracle has NULLs on the left").contains((Long) null);
    Map<String, List<Row>> expected = new TreeMap<>();
    List<Row> all = new ArrayList<>();
    cats.forEach(c -> all.add(Row.of(c)));
    ids.forEach(i -> all.add(Row.of(i)));
    expected.put("ua", all);
    expected.put("u", distinct(all));
    expected.put("i", distinct(cats.stream().filter(ids::contains).map(c -> Row.of(c)).toList()));
    expected.put("e", distinct(cats.stream().filter(c -> !ids.contains(c)).map(c -> Row.of(c)).toList()));
    expected.put("xe", distinct(xs.stream().filter(x -> x == null || !ids.contains(x)).map(x -> Row.of(x)).toList()));
    expected.put("xi", distinct(xs.stream().filter(x -> x != null && ids.contains(x)).map(x -> Row.of(x)).toList()));
    expected.put("xu", distinct(new ArrayList<>(xs.stream().map(x -> Row.of(x)).toList()) {{ addAll(ids.stream().map(i -> Row.of(i)).toList()); }}));
    expected.values().forEach(rows -> rows.sort(Row::compareTo));
    assertThat(expected.get("xe")).as("NULL is in the left side only: it stays, once").containsOnlyOnce(Row.of((Object) null));
    Map<String, String> views = new TreeMap<>(Map.of(
        "ua", "SELECT category FROM gen UNION ALL SELECT id FROM side",
        "u", "SELECT category FROM gen UNION SELECT id FROM side",
        "i", "SELECT category FROM gen INTERSECT SELECT id FROM side",
        "e", "SELECT category FROM gen EXCEPT SELECT id FROM side",
        "xe", XS + " EXCEPT SELECT id FROM side",
        "xi", XS + " INTERSECT SELECT id FROM side",
        "xu", XS + " UNION SELECT id FROM side"));
    for (int workers = 1; workers <= 2; workers++) {
      try (Engine e = SqlFixture.engine(workers)) {
        SqlSession s = SqlFixture.session(e);
        s.execute(SqlFixture.GEN);
        s.execute(OuterJoinTest.SIDE);
        views.forEach((name, q) -> s.execute("CREATE MATERIALIZED VIEW " + name + " AS " + q));
        e.tickUntilCaughtUp(1000);
        for (String name : views.keySet()) {
          assertThat(e.peek(name)).as("%s: %s (%d workers)", name, views.get(name), workers).isEqualTo(expected.get(name));
          assertThat(s.execute(views.get(name)).rows()).as("one-shot " + views.get(name))
              .isEqualTo(expected.get(name).stream().map(r -> Arrays.asList(r.toArray())).toList());
        }
        // the ORDER BY and LIMIT of a query apply to the whole set operation
        List<Row> top = new ArrayList<>(expected.get("u"));
        top.sort((a, b) -> Long.compare(b.getLong(0), a.getLong(0)));
        assertThat(s.execute("SELECT category AS c FROM gen UNION SELECT id FROM side ORDER BY c DESC LIMIT 3").rows())
            .isEqualTo(top.subList(0, 3).stream().map(r -> Arrays.asList(r.toArray())).toList());
        assertThat(s.execute("SHOW VIEWS").rows()).hasSize(views.size());
      }
    }
  }

  @Test
  void mismatchedSidesAndUnsupportedFormsAreRefusedNamingWhy() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      s.execute(OuterJoinTest.SIDE);
      assertThatThrownBy(() -> s.execute("SELECT id, category FROM gen UNION SELECT id FROM side"))
          .hasMessageContaining("must have the same number of columns: 2 and 1");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen UNION SELECT 'a' AS t FROM side"))
          .hasMessageContaining("types BIGINT and TEXT cannot be matched (column 1, 'id')");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen EXCEPT ALL SELECT id FROM side"))
          .hasMessageContaining("unsupported syntax: EXCEPT ALL");
      assertThatThrownBy(() -> s.execute("CREATE MATERIALIZED VIEW v AS SELECT id FROM gen UNION SELECT id FROM side ORDER BY id"))
          .hasMessageContaining("ORDER BY without LIMIT in a view");
    }
  }

  private static List<Row> distinct(List<Row> rows) {
    TreeSet<Row> set = new TreeSet<>(Row::compareTo);
    rows.stream().filter(Objects::nonNull).forEach(set::add);
    return new ArrayList<>(set);
  }
}
