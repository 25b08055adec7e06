package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * CASE, LIKE/ILIKE, BETWEEN and IN in views (maintained over upserts and deletes) and in queries,
 * against the same functions written in Java over the generator's final table; with SQL's NULL
 * logic where a NULL can appear.
 */
class ConditionalExpressionsTest {
  static final Map<Long, Row> TABLE = SqlFixture.table(5000);

  static String band(Row r) {
    long a = r.getLong(2);
    return a < 100 ? "low" : a < 500 ? "mid_dle" : "HIGH";
  }

  static final String BAND = "CASE WHEN amount < 100 THEN 'low' WHEN amount < 500 THEN 'mid_dle' ELSE 'HIGH' END";

  private static List<List<Object>> ids(Predicate<Row> keep) {
    return TABLE.values().stream().filter(keep).map(r -> List.<Object>of(r.getLong(0))).toList();
  }

  @Test
  void viewsAndQueriesEqualTheirJavaEquivalents() {
    Map<String, Predicate<Row>> where = new java.util.LinkedHashMap<>();
    where.put("amount BETWEEN 100 AND 200", r -> r.getLong(2) >= 100 && r.getLong(2) <= 200);
    where.put("amount NOT BETWEEN 100 AND 900", r -> r.getLong(2) < 100 || r.getLong(2) > 900);
    where.put("category IN (1, 3, 5)", r -> List.of(1L, 3L, 5L).contains(r.getLong(1)));
    where.put("category NOT IN (1, 3, 5)", r -> !List.of(1L, 3L, 5L).contains(r.getLong(1)));
    where.put("category NOT IN (1, NULL)", r -> false); // NULL for every row: 1 <> c AND NULL <> c is never TRUE
    where.put("category IN (2, NULL)", r -> r.getLong(1) == 2);
    where.put(BAND + " LIKE 'mid%'", r -> band(r).startsWith("mid"));
    where.put(BAND + " LIKE 'mid\\_dle'", r -> band(r).equals("mid_dle"));
    where.put(BAND + " LIKE 'mid#_d%' ESCAPE '#'", r -> band(r).equals("mid_dle"));
    where.put(BAND + " LIKE '_o_'", r -> band(r).equals("low"));
    where.put(BAND + " NOT LIKE '%i%'", r -> !band(r).contains("i"));
    where.put(BAND + " ILIKE 'hi%'", r -> band(r).equals("HIGH"));
    where.put(BAND + " LIKE 'hi%'", r -> false);
    where.put("CASE category WHEN 1 THEN TRUE WHEN 2 THEN FALSE END", r -> r.getLong(1) == 1);
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      int v = 0;
      for (String w : where.keySet()) {
        s.execute("CREATE MATERIALIZED VIEW w" + v++ + " AS SELECT id FROM gen WHERE " + w);
      }
      s.execute("CREATE MATERIALIZED VIEW banded AS SELECT id, " + BAND + " AS band, "
          + "CASE category WHEN 1 THEN 10 WHEN 2 THEN 2.5 END AS weight FROM gen");
      e.tickUntilCaughtUp(1000);
      v = 0;
      for (Map.Entry<String, Predicate<Row>> w : where.entrySet()) {
        List<List<Object>> expected = ids(w.getValue());
        assertThat(s.execute("SELECT * FROM w" + v++).rows()).as("view: " + w.getKey()).isEqualTo(expected);
        assertThat(s.execute("SELECT id FROM gen WHERE " + w.getKey()).rows()).as("query: " + w.getKey()).isEqualTo(expected);
      }
      assertThat(where.values().stream().filter(p -> TABLE.values().stream().anyMatch(p)).count())
          .as("most conditions keep some rows").isGreaterThanOrEqualTo(where.size() - 3);
      Function<Row, List<Object>> banded = r -> Arrays.asList(r.getLong(0), band(r),
          // 2.5 is a NUMERIC literal (as in PostgreSQL): the CASE is NUMERIC, 10 becomes an exact 10
          r.getLong(1) == 1 ? (Object) new java.math.BigDecimal("10") : r.getLong(1) == 2 ? (Object) new java.math.BigDecimal("2.5") : null);
      List<List<Object>> expected = new ArrayList<>(TABLE.values().stream().map(banded).toList());
      assertThat(s.execute("SELECT * FROM banded").rows()).isEqualTo(expected);
      assertThat(s.execute("SELECT id, band FROM banded WHERE weight IS NULL AND band ILIKE '%DLE'").rows())
          .isEqualTo(TABLE.values().stream().filter(r -> r.getLong(1) != 1 && r.getLong(1) != 2 && band(r).equals("mid_dle"))
              .map(r -> List.<Object>of(r.getLong(0), "mid_dle")).toList());
    }
  }

  @Test
  void wrongTypesAndPatternsAreRefusedNamingWhy() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE amount LIKE '1%'"))
          .hasMessageContaining("type mismatch: LIKE applies to TEXT, not BIGINT");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE " + BAND + " LIKE 'a\\'"))
          .hasMessageContaining("it ends with the escape character");
      assertThatThrownBy(() -> s.execute("SELECT CASE WHEN id > 1 THEN 'x' ELSE 2 END AS c FROM gen"))
          .hasMessageContaining("type mismatch: CASE results are TEXT and BIGINT");
      assertThatThrownBy(() -> s.execute("SELECT CASE WHEN id THEN 1 END AS c FROM gen"))
          .hasMessageContaining("CASE WHEN");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE " + BAND + " SIMILAR TO 'x'"))
          .isInstanceOf(SqlException.class);
    }
  }
}
