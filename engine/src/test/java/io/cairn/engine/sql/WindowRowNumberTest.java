package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Top-k per group as PostgreSQL writes it: {@code ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)}
 * in a subquery and {@code WHERE rn <= k} around it. Maintained through the generator's upserts
 * and deletes over many ticks (a row leaving the top 3 lets the 4th in; a row moving changes the
 * numbers after it), with 1 and 2 workers and across a restore, against a sorting oracle over the
 * generator's final table. The bound on the number becomes the operator's limit (EXPLAIN shows it).
 */
class WindowRowNumberTest {
  static final String TOP3 = "CREATE MATERIALIZED VIEW top3 AS SELECT id, category, amount, rn FROM (SELECT id, category, amount,"
      + " ROW_NUMBER() OVER (PARTITION BY category ORDER BY amount DESC, id) AS rn FROM gen) t WHERE rn <= 3";
  static final List<String> VIEWS = List.of(TOP3,
      "CREATE MATERIALIZED VIEW numbered AS SELECT id, category, ROW_NUMBER() OVER (PARTITION BY category ORDER BY id) AS pos FROM gen",
      "CREATE MATERIALIZED VIEW cheapest AS SELECT * FROM (SELECT category, amount, id, ROW_NUMBER() OVER (PARTITION BY category"
          + " ORDER BY amount, id) FROM gen) x WHERE row_number = 1 AND category > 2",
      "CREATE MATERIALIZED VIEW leaders AS SELECT id, amount, r FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY amount DESC, id) AS r FROM gen) g"
          + " WHERE 5 > r");

  static Map<String, List<Row>> oracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    Map<Long, List<Row>> byCat = new TreeMap<>();
    gen.values().forEach(r -> byCat.computeIfAbsent(r.getLong(1), k -> new ArrayList<>()).add(r));
    List<Row> top3 = new ArrayList<>();
    List<Row> numbered = new ArrayList<>();
    List<Row> cheapest = new ArrayList<>();
    byCat.forEach((cat, rows) -> {
      List<Row> desc = rows.stream().sorted(Comparator.comparing((Row r) -> -r.getLong(2)).thenComparing(r -> r.getLong(0))).toList();
      for (int i = 0; i < Math.min(3, desc.size()); i++) {
        top3.add(Row.of(desc.get(i).get(0), cat, desc.get(i).get(2), (long) i + 1));
      }
      List<Row> byId = rows.stream().sorted(Comparator.comparing(r -> r.getLong(0))).toList();
      for (int i = 0; i < byId.size(); i++) {
        numbered.add(Row.of(byId.get(i).get(0), cat, (long) i + 1));
      }
      Row min = rows.stream().min(Comparator.comparing((Row r) -> r.getLong(2)).thenComparing(r -> r.getLong(0))).orElseThrow();
      if (cat > 2) {
        cheapest.add(Row.of(cat, min.get(2), min.get(0), 1L));
      }
    });
    List<Row> all = gen.values().stream().sorted(Comparator.comparing((Row r) -> -r.getLong(2)).thenComparing(r -> r.getLong(0))).toList();
    List<Row> leaders = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      leaders.add(Row.of(all.get(i).get(0), all.get(i).get(2), (long) i + 1));
    }
    Map<String, List<Row>> out = new TreeMap<>();
    out.put("top3", top3);
    out.put("numbered", numbered);
    out.put("cheapest", cheapest);
    out.put("leaders", leaders);
    out.replaceAll((k, rows) -> rows.stream().sorted(Row::compareTo).toList());
    return out;
  }

  @Test
  void rowNumbersPerGroupEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    assertThat(expected.get("top3")).hasSizeGreaterThan(3 * 5);
    List<String> statements = new ArrayList<>(List.of(SqlFixture.GEN));
    statements.addAll(VIEWS);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      // the bound on the number is the top-k's limit: the operator keeps 3 rows per group, not all of them
      String plan = s.execute("EXPLAIN " + TOP3.substring(TOP3.indexOf("SELECT"))).rows().toString();
      assertThat(plan).contains("TopK per group of [1]").contains("limit 3").contains("numbered as");
      // a condition on the partition column alone filters whole groups: it goes below the numbering
      String cheapest = VIEWS.get(2);
      List<String> lines = s.execute("EXPLAIN " + cheapest.substring(cheapest.indexOf("SELECT"))).rows().stream()
          .map(r -> String.valueOf(r.get(0)).strip()).toList();
      int topK = lines.stream().filter(l -> l.startsWith("TopK")).map(lines::indexOf).findFirst().orElseThrow();
      assertThat(lines.subList(topK, lines.size())).anyMatch(l -> l.startsWith("Filter (#1 > 2)"));
      assertThat(lines.get(topK)).contains("limit 1");
      // a one-shot query numbers too
      assertThat(s.execute("SELECT id, rn FROM (SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM gen) x WHERE rn <= 2").rows())
          .hasSize(2).allMatch(r -> (Long) r.get(1) <= 2);
      assertThatThrownBy(() -> s.execute("SELECT RANK() OVER (ORDER BY id) AS r FROM gen"))
          .hasMessageContaining("window function RANK");
      assertThatThrownBy(() -> s.execute("SELECT ROW_NUMBER() OVER (PARTITION BY amount % 2 ORDER BY id) AS r FROM gen"))
          .hasMessageContaining("PARTITION BY of a window by");
      assertThatThrownBy(() -> s.execute("SELECT category, COUNT(*) AS n, ROW_NUMBER() OVER (ORDER BY category) AS r FROM gen GROUP BY category"))
          .hasMessageContaining("a window function beside GROUP BY");
    }
  }
}
