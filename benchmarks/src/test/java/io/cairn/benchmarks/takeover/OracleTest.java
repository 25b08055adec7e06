package io.cairn.benchmarks.takeover;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.engine.loadgen.LoadGeneratorConnector;
import io.cairn.engine.row.Row;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class OracleTest {
  /** The oracle's packed int table against a map of rows, as GroupTakeoverIT computes its view, over several seeds and sizes. */
  @Test
  void packedTableAgreesWithAMapOfRows() {
    for (long seed : new long[] {1, 7, 42}) {
      for (long rows : new long[] {100, 1_000, 20_000}) {
        var s = new LoadGeneratorConnector.Settings(TakeoverConfig.keysFor(rows), TakeoverConfig.CATEGORIES, seed, 10,
            TakeoverConfig.limitFor(rows), 0);
        Map<Long, Row> table = new HashMap<>();
        for (long i = 0; i < s.limit(); i++) {
          var r = LoadGeneratorConnector.recordAt(s, i);
          if (r.row() == null) {
            table.remove(r.id());
          } else {
            table.put(r.id(), r.row());
          }
        }
        Map<Long, Oracle.Totals> by = new TreeMap<>();
        for (Row r : table.values()) {
          by.merge(r.getLong(1), new Oracle.Totals(1, r.getLong(2)), (a, b) -> new Oracle.Totals(a.n() + b.n(), a.total() + b.total()));
        }
        Map<Long, Long> lookups = new TreeMap<>();
        for (long id : Oracle.lookupIds(s.keys())) {
          Row r = table.get(id);
          lookups.put(id, r == null ? -1 : r.getLong(1) * 1000 + r.getLong(2));
        }

        Oracle o = Oracle.compute(s);

        assertThat(o).as("seed %d, %d rows", seed, rows).isEqualTo(new Oracle(table.size(), by, lookups));
        assertThat(o.diff(table.size(), by, lookups)).isEmpty();
        // about `rows` rows, as TakeoverConfig.limitFor promises (0.99 rows expected)
        assertThat((double) o.rows() / rows).as("seed %d, %d rows", seed, rows).isBetween(0.9, 1.08);
      }
    }
  }

  @Test
  void aWrongAnswerIsNamed() {
    var s = new LoadGeneratorConnector.Settings(2_000, TakeoverConfig.CATEGORIES, 7, 10, 1_600, 0);
    Oracle o = Oracle.compute(s);
    Map<Long, Oracle.Totals> by = new TreeMap<>(o.byCategory());
    long c = by.keySet().iterator().next();
    by.put(c, new Oracle.Totals(by.get(c).n() + 1, by.get(c).total()));
    Map<Long, Long> lookups = new TreeMap<>(o.lookups());
    lookups.put(0L, 12_345L);

    String diff = o.diff(o.rows() - 1, by, lookups);

    assertThat(diff).contains("count(*) " + (o.rows() - 1) + " != " + o.rows()).contains("category " + c + " ").contains("gen id 0 12345 != ");
  }

  @Test
  void everyPollAsksTheViewsAndOneKeyLookupPerId() {
    assertThat(TakeoverBenchmark.query(8_000)).isEqualTo("SELECT n FROM total; SELECT category, n, total FROM by_cat"
        + "; SELECT id, category, amount FROM gen WHERE id = 0; SELECT id, category, amount FROM gen WHERE id = 1001"
        + "; SELECT id, category, amount FROM gen WHERE id = 2002; SELECT id, category, amount FROM gen WHERE id = 3003"
        + "; SELECT id, category, amount FROM gen WHERE id = 4004; SELECT id, category, amount FROM gen WHERE id = 5005"
        + "; SELECT id, category, amount FROM gen WHERE id = 6006; SELECT id, category, amount FROM gen WHERE id = 7007");
  }
}
