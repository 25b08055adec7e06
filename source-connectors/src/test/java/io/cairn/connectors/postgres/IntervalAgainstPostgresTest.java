package io.cairn.connectors.postgres;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.row.Interval;
import io.cairn.engine.row.Row;
import io.cairn.engine.source.Source;
import io.cairn.engine.source.SourceOffsets;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * cairn's INTERVAL against PostgreSQL's own, on random intervals with mixed signs and fractions of
 * a second: the text PostgreSQL writes ({@link Interval#toString}) and reads back ({@link
 * Interval#parse}: the same three fields), its order and equality ({@code '1 mon' = '30 days'}),
 * a timestamp moved by it (months clamped to the month's end), EXTRACT, division by a number and
 * the difference of two timestamps. Then a table with an interval column read through CDC
 * (Debezium's ISO 8601 text): the initial load and streamed changes equal the table, field by field.
 */
class IntervalAgainstPostgresTest {
  static Interval random(Random r) {
    int months = r.nextInt(5) == 0 ? 0 : r.nextInt(61) - 30;
    int days = r.nextInt(5) == 0 ? 0 : r.nextInt(81) - 40;
    long micros = switch (r.nextInt(4)) {
      case 0 -> 0;
      case 1 -> (r.nextInt(200_001) - 100_000) * 1_000_000L; // whole seconds, up to ~28 hours either way
      case 2 -> r.nextLong() % 200_000_000_000L; // any microsecond, up to ~55 hours
      default -> (r.nextInt(2001) - 1000) * 3_600_000_000L + r.nextInt(1_000_000); // whole hours and a fraction
    };
    return new Interval(months, days, micros);
  }

  /** The interval as SQL PostgreSQL evaluates exactly (its input parser caps a field at 32 bits). */
  static String sql(Interval i) {
    return "('" + i.months() + " months " + i.days() + " days'::interval + " + i.micros() + " * interval '1 microsecond')";
  }

  @Test
  void textOrderShiftsExtractsAndDivisionAreThoseOfPostgres() throws Exception {
    Random r = new Random(2026);
    List<Interval> values = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      values.add(random(r));
    }
    values.addAll(List.of(Interval.ZERO, new Interval(1, 0, 0), new Interval(0, 30, 0), new Interval(0, -1, 7_200_000_000L),
        new Interval(0, 0, -1), new Interval(13, -1, 0), new Interval(-14, 3, -86_400_000_001L), new Interval(1, 0, 86_400_000_000L)));
    try (PgFixture pg = new PgFixture("interval")) {
      StringBuilder insert = new StringBuilder("INSERT INTO iv VALUES ");
      for (int i = 0; i < values.size(); i++) {
        insert.append(i == 0 ? "" : ", ").append('(').append(i).append(", ").append(sql(values.get(i))).append(')');
      }
      pg.exec("CREATE TABLE iv (id int PRIMARY KEY, v interval)", insert.toString());
      long jan31 = java.time.LocalDateTime.parse("2024-01-31T10:00:00").toEpochSecond(java.time.ZoneOffset.UTC) * 1_000_000L;
      int checked = 0;
      try (Statement st = pg.sql.createStatement(); ResultSet rs = st.executeQuery(
          "SELECT id, v::text, extract(epoch FROM v)::text, extract(hour FROM v)::bigint, extract(minute FROM v)::bigint,"
              + " extract(second FROM v)::text, extract(day FROM v)::bigint, extract(month FROM v)::bigint, extract(year FROM v)::bigint,"
              + " ((TIMESTAMP '2024-01-31 10:00:00' + v) - TIMESTAMP '1970-01-01')::text, (v / 7)::text, v * 3, -v,"
              + " ((TIMESTAMP '2024-01-31 10:00:00' + v) - TIMESTAMP '2024-03-01 00:00:00')::text FROM iv ORDER BY id")) {
        while (rs.next()) {
          Interval v = values.get(rs.getInt(1));
          String at = "value " + rs.getInt(1) + " (" + v.storageText() + ")";
          assertThat(v.toString()).as(at).isEqualTo(rs.getString(2));
          assertThat(Interval.parse(rs.getString(2)).storageText()).as(at).isEqualTo(v.storageText());
          assertThat((double) v.extract("epoch")).as(at).isCloseTo(Double.parseDouble(rs.getString(3)), org.assertj.core.data.Offset.offset(1e-6));
          assertThat(List.of(v.extract("hour"), v.extract("minute"), v.extract("day"), v.extract("month"), v.extract("year"))).as(at)
              .isEqualTo(List.of(rs.getLong(4), rs.getLong(5), rs.getLong(7), rs.getLong(8), rs.getLong(9)));
          assertThat((double) v.extract("second")).as(at).isCloseTo(Double.parseDouble(rs.getString(6)), org.assertj.core.data.Offset.offset(1e-9));
          // the moved timestamp, as its interval since the epoch: days and time
          assertThat(Interval.between(v.addTo(jan31), 0).toString()).as(at).isEqualTo(rs.getString(10));
          assertThat(v.dividedBy(7).toString()).as(at + " / 7").isEqualTo(rs.getString(11));
          assertThat(v.times(3).toString()).as(at).isEqualTo(rs.getString(12));
          assertThat(v.negate().toString()).as(at).isEqualTo(rs.getString(13));
          long march1 = java.time.LocalDateTime.parse("2024-03-01T00:00:00").toEpochSecond(java.time.ZoneOffset.UTC) * 1_000_000L;
          assertThat(Interval.between(v.addTo(jan31), march1).toString()).as(at).isEqualTo(rs.getString(14));
          checked++;
        }
      }
      assertThat(checked).isEqualTo(values.size());
      // order and equality: PostgreSQL's ORDER BY v, id against compareTo; GROUP BY v against equals
      List<Integer> pgOrder = new ArrayList<>();
      try (Statement st = pg.sql.createStatement(); ResultSet rs = st.executeQuery("SELECT id FROM iv ORDER BY v, id")) {
        while (rs.next()) {
          pgOrder.add(rs.getInt(1));
        }
      }
      List<Integer> ours = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) {
        ours.add(i);
      }
      ours.sort(Comparator.<Integer, Interval>comparing(values::get).thenComparing(i -> i));
      assertThat(ours).isEqualTo(pgOrder);
      long groups = pg.queryLong("SELECT count(DISTINCT v) FROM iv");
      assertThat((long) new java.util.HashSet<>(values).size()).isEqualTo(groups);
      assertThat(new Interval(1, 0, 0)).isEqualTo(new Interval(0, 30, 0)).hasSameHashCodeAs(new Interval(0, 30, 0));
    }
  }

  @Test
  void anIntervalColumnReadThroughChangeDataCaptureKeepsItsFields() throws Exception {
    Random r = new Random(7);
    try (PgFixture pg = new PgFixture("intervalcdc")) {
      StringBuilder insert = new StringBuilder("INSERT INTO spans VALUES ");
      for (int i = 0; i < 120; i++) {
        insert.append(i == 0 ? "" : ", ").append('(').append(i).append(", ").append(i % 10 == 0 ? "NULL" : sql(random(r))).append(')');
      }
      pg.exec("CREATE TABLE spans (id bigint PRIMARY KEY, took interval)", "ALTER TABLE spans REPLICA IDENTITY FULL", insert.toString());
      Source source = pg.open(pg.definition("spans", "public.spans", Map.of("slot", "cairn_spans")));
      try {
        assertThat(source.schema().toString()).isEqualTo("id BIGINT, took INTERVAL");
        source.seek(SourceOffsets.EMPTY);
        PgFixture.Oracle oracle = new PgFixture.Oracle();
        pg.syncWithTable(source, oracle, "spans");
        StringBuilder updates = new StringBuilder();
        for (int i = 0; i < 60; i++) {
          pg.exec("UPDATE spans SET took = " + sql(random(r)) + " WHERE id = " + r.nextInt(120));
        }
        pg.exec("DELETE FROM spans WHERE id % 7 = 3", "INSERT INTO spans VALUES (500, interval '-1 days +02:00:00.000001')");
        pg.syncWithTable(source, oracle, "spans");
        // field by field: PostgreSQL's text of each value against the streamed value's
        Map<Row, Row> table = pg.table("spans", source.schema());
        assertThat(oracle.rows.toString()).isEqualTo(table.toString());
        assertThat(table.get(Row.of(500L)).get(1).toString()).isEqualTo("-1 days +02:00:00.000001");
      } finally {
        source.close();
      }
    }
  }
}
