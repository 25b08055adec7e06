package io.cairn.engine.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.cairn.engine.row.Column;
import io.cairn.engine.row.Numeric;
import io.cairn.engine.row.Row;
import io.cairn.engine.row.Schema;
import io.cairn.engine.row.Type;
import io.cairn.engine.runtime.Engine;
import io.cairn.engine.runtime.TickPolicy;
import io.cairn.engine.testkit.ScriptedConnector;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A NUMERIC column's declared scale ({@code NUMERIC(10, 2)}) is how its values are shown, as in
 * PostgreSQL: {@code 12.50}, not {@code 12.5}, in a query's rows, a view's and a subscription's;
 * an expression's scale follows PostgreSQL's rules ({@code +}: the larger, {@code *}: the sum,
 * SUM/MIN/MAX: the input's, a division and AVG: the value's own). The oracle computes each value
 * with BigDecimal and sets PostgreSQL's scale, and rows are compared with {@code equals}, which
 * tells {@code 12.5} from {@code 12.50}.
 */
class NumericScaleTest {
  static final Schema ITEMS = Schema.of(Column.of("id", Type.BIGINT), Column.numeric("price", 10, 2), Column.of("qty", Type.BIGINT),
      Column.numeric("rate", 6, 3));

  @Test
  void queriesViewsAndSubscriptionsShowTheScalePostgresWouldShow() {
    Random rnd = new Random(11);
    List<List<ScriptedConnector.Rec>> ticks = new ArrayList<>();
    Map<Long, Row> table = new TreeMap<>();
    for (int t = 0; t < 4; t++) {
      List<ScriptedConnector.Rec> tick = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        long id = rnd.nextInt(200);
        if (rnd.nextInt(10) == 0) {
          tick.add(ScriptedConnector.Rec.upsert(Row.of(id), null));
          table.remove(id);
          continue;
        }
        // prices with 0, 1 or 2 decimals once trailing zeros go (12.00, 12.50, 12.34), canonical inside
        BigDecimal price = Numeric.of(BigDecimal.valueOf(rnd.nextInt(5) * 50 + rnd.nextInt(3) * rnd.nextInt(10_000), 2));
        BigDecimal rate = Numeric.of(BigDecimal.valueOf(rnd.nextInt(2000), 3));
        Row r = Row.of(id, price, 1L + rnd.nextInt(5), rate);
        tick.add(ScriptedConnector.Rec.upsert(Row.of(id), r));
        table.put(id, r);
      }
      ticks.add(tick);
    }
    ScriptedConnector c = new ScriptedConnector();
    c.script("items", new ScriptedConnector.Script(ITEMS, List.of("id"), ticks));
    try (Engine e = Engine.builder().workers(2).tickPolicy(new TickPolicy(100_000, java.time.Duration.ofMillis(50))).connector(c).build()) {
      e.createSource(1, ScriptedConnector.definition("items"));
      SqlSession s = SqlFixture.session(e);
      s.execute("CREATE MATERIALIZED VIEW line AS SELECT id, price * qty AS amount, price * rate AS r, price + rate AS plus,"
          + " -price AS neg, ABS(price - 5) AS dist, price / qty AS unit, COALESCE(price, 0.00) AS same, CASE WHEN qty > 2 THEN price ELSE rate END AS mixed"
          + " FROM items");
      s.execute("CREATE MATERIALIZED VIEW by_qty AS SELECT qty, SUM(price) AS total, MIN(price) AS lo, MAX(rate) AS hi, AVG(price) AS mean,"
          + " SUM(price * qty) AS amount FROM items GROUP BY qty");
      for (int t = 1; t <= ticks.size(); t++) {
        c.release(t);
        e.tick();
      }
      e.tick();

      List<List<Object>> items = new ArrayList<>();
      List<List<Object>> line = new ArrayList<>();
      Map<Long, List<Row>> byQty = new TreeMap<>();
      for (Row r : table.values()) {
        BigDecimal price = (BigDecimal) r.get(1);
        BigDecimal rate = (BigDecimal) r.get(3);
        long qty = r.getLong(2);
        items.add(List.of(r.get(0), price.setScale(2)));
        line.add(java.util.Arrays.asList(r.get(0), price.multiply(BigDecimal.valueOf(qty)).setScale(2), price.multiply(rate).setScale(5),
            price.add(rate).setScale(3), price.negate().setScale(2), price.subtract(BigDecimal.valueOf(5)).abs().setScale(2),
            Numeric.divide(price, BigDecimal.valueOf(qty)), price.setScale(2), qty > 2 ? (Object) price : (Object) rate));
        byQty.computeIfAbsent(qty, k -> new ArrayList<>()).add(r);
      }
      assertThat(s.execute("SELECT id, price FROM items ORDER BY id").rows()).isEqualTo(items);
      assertThat(s.execute("SELECT * FROM line ORDER BY id").rows()).isEqualTo(line);
      // a one-shot query computes the same expressions with the same scales
      assertThat(s.execute("SELECT id, price * qty AS amount FROM items ORDER BY id").rows())
          .isEqualTo(line.stream().map(l -> l.subList(0, 2)).toList());
      List<List<Object>> agg = new ArrayList<>();
      byQty.forEach((qty, rows) -> {
        BigDecimal total = rows.stream().map(r -> (BigDecimal) r.get(1)).reduce(BigDecimal.ZERO, BigDecimal::add);
        BigDecimal lo = rows.stream().map(r -> (BigDecimal) r.get(1)).reduce(BigDecimal::min).orElseThrow();
        BigDecimal hi = rows.stream().map(r -> (BigDecimal) r.get(3)).reduce(BigDecimal::max).orElseThrow();
        BigDecimal mean = Numeric.of(total.divide(BigDecimal.valueOf(rows.size()), Numeric.MAX_SCALE, RoundingMode.HALF_UP));
        agg.add(List.of(qty, total.setScale(2), lo.setScale(2), hi.setScale(3), mean, total.multiply(BigDecimal.valueOf(qty)).setScale(2)));
      });
      assertThat(s.execute("SELECT * FROM by_qty ORDER BY qty").rows()).isEqualTo(agg);
      assertThat(agg).as("some totals end in a zero that only the scale shows")
          .anyMatch(r -> ((BigDecimal) r.get(1)).toPlainString().endsWith("0"));
      // a subscription's snapshot rows carry the scale too
      Subscribe sub = Subscribe.parse("SUBSCRIBE TO by_qty");
      Schema cols = Subscribe.columns(e.dataflow("by_qty").orElseThrow().schema());
      assertThat(cols.column(4).scale()).isEqualTo(2);
      assertThat(cols.column(7).scale()).isEqualTo(Column.NONE);
      Row first = e.peek("by_qty").get(0);
      List<List<Object>> sent = sub.rows(new io.cairn.engine.sink.ChangeFeed.Changes(9, List.of(first), new long[] {1}), cols);
      assertThat(sent.get(0).subList(3, 9)).isEqualTo(agg.stream().filter(r -> r.get(0).equals(first.get(0))).findFirst().orElseThrow());
    }
  }

  @Test
  void aDeclaredScaleIsParsedAndCheckedWhereverATypeIsWritten() {
    Statement.CreateSource cs = (Statement.CreateSource) Parser.parse(
        "CREATE SOURCE o FROM KAFKA (topic = 'o') FORMAT JSON ENVELOPE UPSERT (id BIGINT PRIMARY KEY, price NUMERIC(15, 2), q DECIMAL(7), x NUMERIC)");
    assertThat(cs.schema().columns().stream().map(c -> c.name() + " " + c.sqlType()).toList())
        .containsExactly("id BIGINT", "price NUMERIC(15, 2)", "q NUMERIC(7, 0)", "x NUMERIC");
    assertThat(cs.schema().column(1)).as("equal as a layout: name and type").isEqualTo(Column.of("price", Type.NUMERIC));
    assertThat(cs.schema().toString()).as("the fingerprint's text has no scale").isEqualTo("id BIGINT, price NUMERIC, q NUMERIC, x NUMERIC");
    assertThatThrownBy(() -> Parser.parse("CREATE SOURCE o FROM KAFKA (topic = 'o') (id BIGINT, price NUMERIC(4, 6))"))
        .hasMessageContaining("NUMERIC(4, 6)");
    assertThatThrownBy(() -> Parser.parse("CREATE SOURCE o FROM KAFKA (topic = 'o') (id BIGINT, price NUMERIC(30, 20))"))
        .hasMessageContaining("scale is 0 to 18");
    assertThat(Schema.parse("id BIGINT, price NUMERIC(15, 2), n NUMERIC(9)").columns().stream().map(c -> c.name() + " " + c.sqlType()))
        .containsExactly("id BIGINT", "price NUMERIC(15, 2)", "n NUMERIC(9, 0)");
    assertThatThrownBy(() -> Schema.parse("id BIGINT(3)")).hasMessageContaining("only NUMERIC takes a precision");
    // values are rounded half away from zero into the column, and too many integer digits are an overflow
    Column p = Column.numeric("price", 6, 2);
    assertThat(Numeric.fit(new BigDecimal("12.345"), p)).isEqualTo(new BigDecimal("12.35"));
    assertThat(Numeric.fit(new BigDecimal("-0.005"), p)).isEqualTo(new BigDecimal("-0.01"));
    assertThat(Numeric.fit(new BigDecimal("12.50"), p)).isEqualTo(new BigDecimal("12.5"));
    assertThat(Numeric.fit(new BigDecimal("9999.994"), p)).isEqualTo(new BigDecimal("9999.99"));
    assertThatThrownBy(() -> Numeric.fit(new BigDecimal("9999.995"), p)).hasMessageContaining("numeric field overflow")
        .hasMessageContaining("NUMERIC(6, 2)");
    assertThat(Numeric.display(new BigDecimal("12.5"), 2)).isEqualTo(new BigDecimal("12.50"));
    assertThat(Numeric.display(new BigDecimal("12.5"), Column.NONE)).isEqualTo(new BigDecimal("12.5"));
  }
}
