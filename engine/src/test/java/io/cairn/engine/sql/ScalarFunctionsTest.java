package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.row.Row;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** SUBSTRING, UPPER, LOWER, LENGTH, COALESCE and ABS: PostgreSQL's answers, in a view across a restore, and their refusals. */
class ScalarFunctionsTest {
  static Object eval(Expr.Func.Fn fn, Object... args) {
    List<Expr> a = new ArrayList<>();
    for (Object o : args) {
      a.add(o == null ? new Expr.Lit(null, io.cairn.engine.row.Type.NULL) : Expr.lit(o));
    }
    return new Expr.Func(fn, a).eval(Row.of());
  }

  @Test
  void answersAreThoseOfPostgres() {
    // SELECT substring('hello' FROM 2 FOR 3) and friends, as PostgreSQL 15 answers them
    assertThat(eval(Expr.Func.Fn.SUBSTRING, "hello", 2L, 3L)).isEqualTo("ell");
    assertThat(eval(Expr.Func.Fn.SUBSTRING, "hello", 0L, 3L)).isEqualTo("he");
    assertThat(eval(Expr.Func.Fn.SUBSTRING, "hello", -1L, 2L)).isEqualTo("");
    assertThat(eval(Expr.Func.Fn.SUBSTRING, "hello", 2L)).isEqualTo("ello");
    assertThat(eval(Expr.Func.Fn.SUBSTRING, "hello", 10L, 2L)).isEqualTo("");
    assertThat(eval(Expr.Func.Fn.SUBSTRING, "h\u00e9llo\uD83D\uDE00!", 5L, 2L)).as("characters, not UTF-16 units").isEqualTo("o\uD83D\uDE00");
    assertThat(eval(Expr.Func.Fn.SUBSTRING, null, 1L, 2L)).isNull();
    assertThatThrownBy(() -> eval(Expr.Func.Fn.SUBSTRING, "hello", 1L, -1L)).hasMessageContaining("negative substring length");
    assertThat(eval(Expr.Func.Fn.LENGTH, "h\u00e9\uD83D\uDE00")).isEqualTo(3L);
    assertThat(eval(Expr.Func.Fn.UPPER, "abc\u00e9")).isEqualTo("ABC\u00c9");
    assertThat(eval(Expr.Func.Fn.COALESCE, null, 2L, 3L)).isEqualTo(2L);
    assertThat(eval(Expr.Func.Fn.COALESCE, null, 2L, new java.math.BigDecimal("1.5"))).as("widened to the common type")
        .isEqualTo(io.cairn.engine.row.Numeric.of(2L));
    assertThat(eval(Expr.Func.Fn.ABS, -7L)).isEqualTo(7L);
  }

  @Test
  void aViewOfFunctionsEqualsTheOracleAcrossARestore() {
    String prefix = "SUBSTRING(CASE WHEN category < 5 THEN 'low' ELSE 'high' END FROM 1 FOR 2)";
    List<String> statements = List.of(SqlFixture.GEN,
        "CREATE MATERIALIZED VIEW f AS SELECT " + prefix + " AS p, COUNT(*) AS n, SUM(ABS(500 - amount)) AS dist FROM gen GROUP BY " + prefix,
        "CREATE MATERIALIZED VIEW g AS SELECT id, UPPER(COALESCE(CASE WHEN amount > 500 THEN 'big' END, 'small')) AS size,"
            + " LENGTH(SUBSTR(CASE WHEN amount > 500 THEN 'big' ELSE 'small' END, 2)) AS len FROM gen WHERE id < 20");
    Map<String, long[]> f = new TreeMap<>();
    List<Row> g = new ArrayList<>();
    for (Row r : SqlFixture.table(5000).values()) {
      f.merge(r.getLong(1) < 5 ? "lo" : "hi", new long[] {1, Math.abs(500 - r.getLong(2))}, (a, b) -> new long[] {a[0] + b[0], a[1] + b[1]});
      if (r.getLong(0) < 20) {
        g.add(Row.of(r.getLong(0), r.getLong(2) > 500 ? "BIG" : "SMALL", r.getLong(2) > 500 ? 2L : 4L));
      }
    }
    List<Row> fRows = new ArrayList<>();
    f.forEach((p, a) -> fRows.add(Row.of(p, a[0], a[1])));
    fRows.sort(Row::compareTo);
    g.sort(Row::compareTo);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, new TreeMap<>(Map.of("f", fRows, "g", g)));
  }

  @Test
  void wrongArgumentsAreRefusedNamingTheFunction() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      assertThatThrownBy(() -> s.execute("SELECT SUBSTRING(id FROM 1 FOR 2) FROM gen"))
          .hasMessageContaining("SUBSTRING takes (TEXT FROM BIGINT [FOR BIGINT])");
      assertThatThrownBy(() -> s.execute("SELECT COALESCE(id, 'x') FROM gen")).hasMessageContaining("COALESCE types [BIGINT, TEXT] cannot be matched");
      assertThatThrownBy(() -> s.execute("SELECT frobnicate(id) FROM gen")).hasMessageContaining("unsupported function 'frobnicate'");
      assertThatThrownBy(() -> s.execute("SELECT UPPER('a', 'b') FROM gen")).hasMessageContaining("UPPER takes one TEXT");
    }
  }
}
