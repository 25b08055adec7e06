package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.expr.Expr;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.IsoFields;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * DATE and TIMESTAMP literals, INTERVAL arithmetic and EXTRACT: the SQL forms TPC-H and BI tools
 * write ({@code DATE '1998-12-01' - INTERVAL '90' DAY}), and the expressions over random
 * timestamps against java.time.
 */
class DateTimeExpressionsTest {
  @Test
  void literalsIntervalsAndExtractInSql() {
    try (Engine e = SqlFixture.engine(1)) {
      SqlSession s = SqlFixture.session(e);
      s.execute(SqlFixture.GEN);
      e.tickUntilCaughtUp(1000);
      long id = SqlFixture.table(5000).keySet().iterator().next();
      List<List<Object>> rows = s.execute("SELECT EXTRACT(year FROM DATE '1998-12-01' - INTERVAL '90' DAY) AS y,"
          + " EXTRACT(month FROM DATE '1998-12-01' - INTERVAL '90' DAY) AS m, EXTRACT(day FROM DATE '1998-12-01' - INTERVAL '90' DAY) AS d,"
          + " EXTRACT(dow FROM DATE '2026-12-06') AS dow, EXTRACT(epoch FROM TIMESTAMP '1970-01-02 00:00:01.5') AS ep"
          + " FROM gen WHERE id = " + id).rows();
      assertThat(rows).containsExactly(List.of(1998L, 9L, 2L, 0L, 86401.5));
      // month arithmetic clamps the day, as PostgreSQL's
      assertThat(s.execute("SELECT id FROM gen WHERE id = " + id + " AND TIMESTAMP '2024-01-31 10:00:00' + INTERVAL '1' MONTH"
          + " = TIMESTAMP '2024-02-29 10:00:00' AND DATE '1994-01-01' + INTERVAL '1' YEAR > DATE '1994-12-31'"
          + " AND DATE '2000-03-01' - INTERVAL '1 day 2 hours' = TIMESTAMP '2000-02-28 22:00:00'").rows()).containsExactly(List.of(id));
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE DATE '1998-13-01' > DATE '1998-01-01'"))
          .hasMessageContaining("'1998-13-01' is not a DATE");
      assertThatThrownBy(() -> s.execute("SELECT id FROM gen WHERE DATE '1998-01-01' + INTERVAL '3' fortnight > DATE '1998-01-01'"))
          .hasMessageContaining("unknown unit 'fortnight'");
      assertThatThrownBy(() -> s.execute("SELECT EXTRACT(year FROM amount) AS y FROM gen"))
          .hasMessageContaining("Cannot EXTRACT from BIGINT");
      assertThatThrownBy(() -> s.execute("SELECT amount + INTERVAL '1' DAY AS y FROM gen"))
          .hasMessageContaining("Cannot apply '+' to BIGINT and INTERVAL");
    }
  }

  @Test
  void shiftAndExtractOverRandomTimestampsEqualJavaTime() {
    Random r = new Random(5);
    Expr col = Expr.col(0, Type.TIMESTAMP);
    for (int i = 0; i < 2000; i++) {
      long micros = (long) (r.nextDouble() * 4e15) - 2_000_000_000_000_000L; // 1906..2096
      LocalDateTime t = LocalDateTime.ofEpochSecond(Math.floorDiv(micros, 1_000_000L), (int) Math.floorMod(micros, 1_000_000L) * 1000,
          ZoneOffset.UTC);
      Row row = Row.of(micros);
      long months = r.nextInt(50) - 25;
      long days = r.nextInt(100) - 50;
      LocalDateTime expected = t.plusMonths(months).plusDays(days);
      long got = (Long) new Expr.TimestampShift(col, months, days * 86_400_000_000L).eval(row);
      assertThat(got).isEqualTo(expected.toEpochSecond(ZoneOffset.UTC) * 1_000_000L + expected.getNano() / 1000);
      assertThat(new Expr.Extract("year", col).eval(row)).isEqualTo((long) t.getYear());
      assertThat(new Expr.Extract("quarter", col).eval(row)).isEqualTo((long) ((t.getMonthValue() + 2) / 3));
      assertThat(new Expr.Extract("week", col).eval(row)).isEqualTo((long) t.get(IsoFields.WEEK_OF_WEEK_BASED_YEAR));
      assertThat(new Expr.Extract("doy", col).eval(row)).isEqualTo((long) t.getDayOfYear());
      assertThat(new Expr.Extract("isodow", col).eval(row)).isEqualTo((long) t.getDayOfWeek().getValue());
      assertThat(new Expr.Extract("minute", col).eval(row)).isEqualTo((long) t.getMinute());
      assertThat((Double) new Expr.Extract("second", col).eval(row)).isEqualTo(t.getSecond() + t.getNano() / 1e9);
    }
    assertThat(new Expr.Extract("year", col).eval(Row.of((Object) null))).isNull();
  }
}
