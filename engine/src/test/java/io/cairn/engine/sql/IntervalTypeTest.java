package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Interval;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * INTERVAL as a column type in views: made from arithmetic on the generator's numbers (interval ×
 * BIGINT, interval + interval), summed, compared, added to timestamps, extracted from, and the
 * difference of two timestamps; against a java oracle over the generator's final table, through
 * upserts and deletes over many ticks, with 1 and 2 workers and a restore from a snapshot taken
 * half-way. The rows are compared once as values (PostgreSQL's equality: {@code '1 mon' = '30
 * days'}) and once as text, which tells the fields apart.
 */
class IntervalTypeTest {
  static final String DUR = "INTERVAL '1 month' * (category % 3) + INTERVAL '1 day' * category + INTERVAL '1 minute' * amount";
  static final long JAN31 = java.time.LocalDateTime.parse("2024-01-31T00:00:00").toEpochSecond(java.time.ZoneOffset.UTC) * 1_000_000L;
  static final long JAN1 = java.time.LocalDateTime.parse("2024-01-01T00:00:00").toEpochSecond(java.time.ZoneOffset.UTC) * 1_000_000L;

  static final List<String> VIEWS = List.of(
      "CREATE MATERIALIZED VIEW d AS SELECT id, category, dur, TIMESTAMP '2024-01-31 00:00:00' + dur AS at, EXTRACT(EPOCH FROM dur) AS secs,"
          + " EXTRACT(HOUR FROM dur) AS h, -dur AS neg FROM (SELECT id, category, " + DUR + " AS dur FROM gen) x",
      "CREATE MATERIALIZED VIEW s AS SELECT category, SUM(dur) AS total, MIN(dur) AS lo, MAX(dur) AS hi, COUNT(*) AS n FROM d GROUP BY category",
      "CREATE MATERIALIZED VIEW longer AS SELECT id FROM d WHERE dur > INTERVAL '2 days 3 hours' AND dur <= '9 days'",
      "CREATE MATERIALIZED VIEW since AS SELECT id, at - TIMESTAMP '2024-01-01 00:00:00' AS gap, at - DATE '2024-01-01' - INTERVAL '1 hour' AS gap2 FROM d",
      "CREATE MATERIALIZED VIEW months AS SELECT CASE WHEN category % 2 = 0 THEN INTERVAL '1 month' ELSE INTERVAL '30 days' END AS m,"
          + " COUNT(*) AS n FROM gen GROUP BY CASE WHEN category % 2 = 0 THEN INTERVAL '1 month' ELSE INTERVAL '30 days' END");

  static Map<String, List<Row>> oracle() {
    Map<Long, Row> gen = SqlFixture.table(5000);
    List<Row> d = new ArrayList<>();
    Map<Long, Interval[]> s = new TreeMap<>();
    Map<Long, Long> n = new TreeMap<>();
    List<Row> longer = new ArrayList<>();
    List<Row> since = new ArrayList<>();
    Interval lo = Interval.parse("2 days 3 hours");
    Interval hi = Interval.parse("9 days");
    gen.forEach((id, r) -> {
      long cat = r.getLong(1);
      Interval dur = new Interval((int) (cat % 3), (int) cat, r.getLong(2) * 60_000_000L);
      long at = dur.addTo(JAN31);
      d.add(Row.of(id, cat, dur, at, dur.extract("epoch"), dur.extract("hour"), dur.negate()));
      s.merge(cat, new Interval[] {dur, dur, dur}, (a, b) -> new Interval[] {a[0].plus(b[0]), a[1].compareTo(b[1]) <= 0 ? a[1] : b[1],
          a[2].compareTo(b[2]) >= 0 ? a[2] : b[2]});
      n.merge(cat, 1L, Long::sum);
      if (dur.compareTo(lo) > 0 && dur.compareTo(hi) <= 0) {
        longer.add(Row.of(id));
      }
      since.add(Row.of(id, Interval.between(at, JAN1), Interval.between(at, JAN1).minus(Interval.parse("1 hour"))));
    });
    Map<String, List<Row>> out = new TreeMap<>();
    out.put("d", d);
    List<Row> sRows = new ArrayList<>();
    s.forEach((c, v) -> sRows.add(Row.of(c, v[0], v[1], v[2], n.get(c))));
    out.put("s", sRows);
    out.put("longer", longer);
    out.put("since", since);
    out.put("months", List.of(Row.of(Interval.parse("1 mon"), (long) gen.size())));
    out.replaceAll((k, rows) -> rows.stream().sorted(Row::compareTo).toList());
    return out;
  }

  @Test
  void intervalViewsEqualTheOracleAfterUpsertsAndDeletesAndAfterARestore() {
    Map<String, List<Row>> expected = oracle();
    assertThat(expected.get("longer")).isNotEmpty().hasSizeLessThan(expected.get("d").size());
    assertThat(expected.get("d")).as("some shifts cross a month's end").anyMatch(r -> ((Interval) r.get(2)).months() == 1);
    List<String> statements = new ArrayList<>(List.of(SqlFixture.GEN));
    statements.addAll(VIEWS);
    SqlFixture.assertViewsEqualOracleAcrossARestore(statements, expected);
    try (Engine e = SqlFixture.engine(2)) {
      SqlSession s = SqlFixture.session(e);
      statements.forEach(s::execute);
      e.tickUntilCaughtUp(1000);
      for (String v : List.of("d", "s", "since")) {
        // as text too: each value keeps the fields it was made with
        assertThat(e.peek(v).toString()).as(v).isEqualTo(expected.get(v).toString());
      }
      Result r = s.execute("SELECT id, dur, dur * 2 AS twice, dur / 2 AS half, EXTRACT(DAY FROM dur) AS dd FROM d ORDER BY id LIMIT 1");
      assertThat(r.types()).containsExactly(Type.BIGINT, Type.INTERVAL, Type.INTERVAL, Type.INTERVAL, Type.BIGINT);
      Interval first = (Interval) expected.get("d").stream().filter(x -> x.get(0).equals(r.rows().get(0).get(0))).findFirst().orElseThrow().get(2);
      assertThat(r.rows().get(0).get(2).toString()).isEqualTo(first.times(2).toString());
      assertThat(r.render()).contains(first.toString());
      assertThat(s.execute("SELECT COUNT(*) AS n FROM d WHERE dur = '" + first + "'").rows().get(0).get(0)).isNotEqualTo(0L);
      assertThat(s.execute("SELECT n FROM months").rows()).containsExactly(List.of((long) SqlFixture.table(5000).size()));
      // what an INTERVAL does not take, with the reason
      assertThatThrownBy(() -> s.execute("SELECT dur + 1 AS x FROM d")).hasMessageContaining("an INTERVAL takes + or - an INTERVAL");
      assertThatThrownBy(() -> s.execute("SELECT EXTRACT(DOW FROM dur) AS x FROM d")).hasMessageContaining("Cannot EXTRACT dow from an INTERVAL");
      assertThatThrownBy(() -> s.execute("SELECT INTERVAL '3 fortnights' AS x FROM d")).hasMessageContaining("unknown unit 'fortnights'");
      assertThatThrownBy(() -> s.execute("SELECT dur * 1.5 AS x FROM d")).hasMessageContaining("an INTERVAL takes");
      // an overflow names its type and expression, not Java's "long overflow"
      assertThatThrownBy(() -> s.execute("SELECT dur * 9223372036854775807 AS x FROM d WHERE secs > 0"))
          .hasMessageContaining("INTERVAL out of range in");
      assertThatThrownBy(() -> s.execute("SELECT amount * 9223372036854775807 AS x FROM gen WHERE amount > 1"))
          .hasMessageContaining("BIGINT out of range in");
    }
  }

  @Test
  void aSourceColumnIsDeclaredInterval() {
    Statement.CreateSource cs = (Statement.CreateSource) Parser.parse(
        "CREATE SOURCE t FROM KAFKA (topic = 't') FORMAT JSON ENVELOPE UPSERT (id BIGINT PRIMARY KEY, took INTERVAL)");
    assertThat(cs.schema().type(1)).isEqualTo(Type.INTERVAL);
  }
}
